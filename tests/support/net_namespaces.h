#pragma once
// Network namespaces joined by veth pairs for multi-host tests on one machine (needs root
// and iproute2's `ip`). Names are unique per process (pid in them), and the destructor
// deletes every namespace it created (their veths go with them), also when the test
// failed. A namespace left by a test process that was killed is deleted by the next run.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace sloserve::testing {

class NetNamespaces {
 public:
  // `prefix` + pid + "-" starts every name (keep it short: veth names have 15 characters).
  explicit NetNamespaces(const std::string& prefix)
      : prefix_(prefix), tag_(prefix + std::to_string(getpid()) + "-") {
    for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
      if (access(path, X_OK) == 0) {
        ip_ = path;
        break;
      }
    }
    if (ip_.empty()) {
      error_ = "iproute2's ip not found";
    } else if (geteuid() != 0) {
      error_ = "not root (network namespaces need CAP_SYS_ADMIN)";
    } else {
      DeleteStale();
    }
  }
  ~NetNamespaces() {
    for (const std::string& ns : created_) Run({ip_, "netns", "delete", ns});
  }
  NetNamespaces(const NetNamespaces&) = delete;
  NetNamespaces& operator=(const NetNamespaces&) = delete;

  // Empty while everything worked; otherwise the first failure (command and its stderr).
  const std::string& error() const { return error_; }
  // Another iproute2 tool (e.g. "tc"), from the directory `ip` is in.
  std::string Tool(const std::string& name) const {
    return ip_.substr(0, ip_.rfind('/') + 1) + name;
  }

  // Creates namespace `name` (made unique: the returned name) with its loopback up.
  std::string Add(const std::string& name) {
    const std::string ns = tag_ + name;
    if (!error_.empty()) return ns;
    if (Run({ip_, "netns", "add", ns})) created_.push_back(ns);
    Run({ip_, "-n", ns, "link", "set", "lo", "up"});
    return ns;
  }

  // A veth pair between namespaces a and b (names from Add): interface `a_if` with
  // address a_addr (CIDR) in a, `b_if` with b_addr in b, both up.
  void Link(const std::string& a, const std::string& a_if, const std::string& a_addr,
            const std::string& b, const std::string& b_if, const std::string& b_addr) {
    Run({ip_, "link", "add", a_if, "netns", a, "type", "veth", "peer", "name", b_if, "netns", b});
    Run({ip_, "-n", a, "addr", "add", a_addr, "dev", a_if});
    Run({ip_, "-n", b, "addr", "add", b_addr, "dev", b_if});
    Run({ip_, "-n", a, "link", "set", a_if, "up"});
    Run({ip_, "-n", b, "link", "set", b_if, "up"});
  }

  // argv run in namespace `ns` (`ip netns exec`, which execs it: the child's pid is the
  // command's, so signals reach it).
  std::vector<std::string> Exec(const std::string& ns, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {ip_, "netns", "exec", ns});
    return argv;
  }

  // Runs argv to completion; false (and error() set, if not yet) when it fails.
  bool Run(const std::vector<std::string>& argv) {
    if (!error_.empty()) return false;
    ProcessResult r = RunProcess(argv);
    if (r.exit_code == 0) return true;
    std::string cmd;
    for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    error_ = "`" + cmd + "` failed (exit " + std::to_string(r.exit_code) + "): " + r.err;
    return false;
  }

 private:
  // Namespaces named by this prefix whose test process is gone (killed before its
  // destructor ran).
  void DeleteStale() {
    const ProcessResult list = RunProcess({ip_, "netns", "list"});
    std::istringstream lines(list.out);
    for (std::string line; std::getline(lines, line);) {
      const std::string name = line.substr(0, line.find(' '));
      if (name.rfind(prefix_, 0) != 0) continue;
      const std::string pid = name.substr(prefix_.size(), name.find('-') - prefix_.size());
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) {
        RunProcess({ip_, "netns", "delete", name});
      }
    }
  }

  const std::string prefix_, tag_;
  std::string ip_, error_;
  std::vector<std::string> created_;
};

}  // namespace sloserve::testing
