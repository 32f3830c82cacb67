#pragma once
// A policy's options as strings (from YAML, --set or HTTP), read through typed getters
// that fail with a message naming the policy and key. Each policy parses its Options
// struct from here once, in its factory, and never sees raw config again.
#include <map>
#include <string>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

class PolicyParams {
 public:
  PolicyParams() = default;
  PolicyParams(std::string owner, std::map<std::string, std::string> values)
      : owner_(std::move(owner)), values_(std::move(values)) {}

  // Asking whether a key is set counts as reading it: the policy knows the key.
  bool Has(const std::string& key) const {
    used_[key] = true;
    return values_.count(key) > 0;
  }
  StatusOr<std::string> GetString(const std::string& key, const std::string& fallback) const;
  StatusOr<double> GetDouble(const std::string& key, double fallback) const;
  StatusOr<int64_t> GetInt(const std::string& key, int64_t fallback) const;
  StatusOr<bool> GetBool(const std::string& key, bool fallback) const;
  // Keys that no getter asked for: reported as "unknown option" so typos do not pass.
  Status CheckAllUsed() const;
  // Set keys that no getter (or Has) asked for, sorted.
  std::vector<std::string> UnusedKeys() const;
  // Every key a getter or Has asked for, set or not, sorted: run a factory on empty
  // params and this is the list of options it knows.
  std::vector<std::string> AskedKeys() const;
  const std::map<std::string, std::string>& values() const { return values_; }
  void Set(const std::string& key, const std::string& value) { values_[key] = value; }

 private:
  Status Bad(const std::string& key, const std::string& what) const;
  std::string owner_;
  std::map<std::string, std::string> values_;
  mutable std::map<std::string, bool> used_;
};

}  // namespace sloserve
