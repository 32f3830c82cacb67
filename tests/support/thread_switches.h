#pragma once
// Voluntary context switches of a process's threads with a given name, from
// /proc/PID/task/*/: how often those threads went to sleep (tests that check which thread
// is woken per request, with wide margins).
#include <sys/types.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace sloserve::testing {

// Sum over the threads of `pid` named `name` (their comm); 0 if none.
inline long VoluntarySwitches(pid_t pid, const std::string& name) {
  long total = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::string comm;
    std::getline(std::ifstream(task.path() / "comm"), comm);
    if (comm != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        total += std::strtol(line.c_str() + 24, nullptr, 10);
      }
    }
  }
  return total;
}

}  // namespace sloserve::testing
