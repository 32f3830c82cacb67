#include "sloserve/policy/params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sloserve {

Status PolicyParams::Bad(const std::string& key, const std::string& what) const {
  return InvalidArgumentError(owner_ + ": option '" + key + "': " + what);
}

StatusOr<std::string> PolicyParams::GetString(const std::string& key,
                                              const std::string& fallback) const {
  used_[key] = true;
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

StatusOr<double> PolicyParams::GetDouble(const std::string& key, double fallback) const {
  used_[key] = true;
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const char* s = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || errno != 0 || !std::isfinite(v)) {
    return Bad(key, "expected a number, got \"" + it->second + "\"");
  }
  return v;
}

StatusOr<int64_t> PolicyParams::GetInt(const std::string& key, int64_t fallback) const {
  used_[key] = true;
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const char* s = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0) {
    return Bad(key, "expected an integer, got \"" + it->second + "\"");
  }
  return static_cast<int64_t>(v);
}

StatusOr<bool> PolicyParams::GetBool(const std::string& key, bool fallback) const {
  used_[key] = true;
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (it->second == "true" || it->second == "1" || it->second == "yes") return true;
  if (it->second == "false" || it->second == "0" || it->second == "no") return false;
  return Bad(key, "expected true/false, got \"" + it->second + "\"");
}

Status PolicyParams::CheckAllUsed() const {
  for (const auto& [key, value] : values_) {
    if (!used_.count(key)) return Bad(key, "unknown option");
  }
  return OkStatus();
}

std::vector<std::string> PolicyParams::UnusedKeys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : values_) {
    if (!used_.count(key)) out.push_back(key);
  }
  return out;
}

std::vector<std::string> PolicyParams::AskedKeys() const {
  std::vector<std::string> out;
  for (const auto& [key, asked] : used_) out.push_back(key);
  return out;
}

}  // namespace sloserve
