#include "sloserve/server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "sloserve/core/declared_key.h"

namespace sloserve {
namespace {

void Series(std::string& out, const char* name, const char* type, const char* help, double value) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type,
                name, value);
  out += buf;
}

// Prometheus label values: backslash, double quote and newline escaped.
std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// /proc/self/stat's fields after the command name (which may hold spaces and parentheses).
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;  // fields[0] is the state (field 3 of proc(5))
}

// A numeric field of /proc/self/stat (0 if the kernel ever wrote something else).
double StatNumber(const std::vector<std::string>& fields, size_t i) {
  return ParseNumber(fields[i]).value_or(0);
}

double SystemBootTime() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

}  // namespace

std::string RenderProcessMetrics(const BuildInfo& build) {
  std::string out =
      "# HELP sloserve_build_info The build: version and git revision (always 1).\n"
      "# TYPE sloserve_build_info gauge\n"
      "sloserve_build_info{version=\"" +
      LabelValue(build.version) + "\",revision=\"" + LabelValue(build.revision) + "\"} 1\n";
  const std::vector<std::string> f = StatFields();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24 (1-based; f[0] is field 3).
  if (f.size() > 21 && ticks > 0) {
    Series(out, "process_cpu_seconds_total", "counter", "User and system CPU time, seconds.",
           (StatNumber(f, 11) + StatNumber(f, 12)) / ticks);
    const double boot = SystemBootTime();
    if (boot > 0) {
      Series(out, "process_start_time_seconds", "gauge",
             "Start time of the process since the Unix epoch, seconds.",
             boot + StatNumber(f, 19) / ticks);
    }
    Series(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size, bytes.",
           StatNumber(f, 20));
    Series(out, "process_resident_memory_bytes", "gauge", "Resident memory size, bytes.",
           StatNumber(f, 21) * page);
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) Series(out, "process_open_fds", "gauge", "Open file descriptors.", fds);
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    Series(out, "process_max_fds", "gauge", "Limit on open file descriptors.",
           static_cast<double>(limit.rlim_cur));
  }
  return out;
}

}  // namespace sloserve
