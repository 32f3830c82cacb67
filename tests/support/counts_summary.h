#pragma once
// "key: n, key: n" of a map of counts, for test failure messages.
#include <cstdint>
#include <map>
#include <string>

namespace sloserve::testing {

inline std::string CountsSummary(const std::map<std::string, int64_t>& counts) {
  std::string s;
  for (const auto& [k, n] : counts) s += (s.empty() ? "" : ", ") + k + ": " + std::to_string(n);
  return s;
}

}  // namespace sloserve::testing
