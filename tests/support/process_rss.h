#pragma once
// The resident set size of a process the test started, from /proc (tests that bound a
// server's or a worker's memory).
#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace sloserve::testing {

// VmRSS of `pid`, KiB (0 if unreadable).
inline long RssKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

}  // namespace sloserve::testing
