#pragma once
// A policy's options as strings (from YAML, --set or HTTP), read through getters that
// take the option's declaration (a KeyDecl declared next to the policy's factory: name,
// type, default, unit, range or choices, help). The default comes from the declaration;
// a value is checked against the declared type and range, and a refusal names the
// policy, the option, the value and the allowed range. Each policy parses its Options
// struct from here once, in its factory, and never sees raw config again.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/status.h"

namespace sloserve {

class PolicyParams {
 public:
  PolicyParams() = default;
  PolicyParams(std::string owner, std::map<std::string, std::string> values)
      : owner_(std::move(owner)), values_(std::move(values)) {}

  // The same values read on behalf of `owner` ("selection policy 'ramsis'"): errors name it.
  PolicyParams WithOwner(std::string owner) const {
    return PolicyParams(std::move(owner), values_);
  }

  // Whether the option is set. Asking counts as reading it: the policy declares the key.
  bool Has(const KeyDecl& key) const;
  // kString and kPath as given; kChoice checked against the choices.
  StatusOr<std::string> GetString(const KeyDecl& key) const;
  // kNumber (and kInteger read as a number).
  StatusOr<double> GetDouble(const KeyDecl& key) const;
  StatusOr<int64_t> GetInt(const KeyDecl& key) const;
  StatusOr<bool> GetBool(const KeyDecl& key) const;
  StatusOr<std::vector<double>> GetNumberList(const KeyDecl& key) const;

  // Set keys that no getter (or Has) asked for: "unknown option" so typos do not pass.
  Status CheckAllUsed() const;
  // Set keys that no getter (or Has) asked for, sorted.
  std::vector<std::string> UnusedKeys() const;
  // The declarations of every key a getter or Has asked for, set or not, in the order
  // first asked: run a factory on empty params and this is the list of its options.
  std::vector<KeyDecl> AskedKeys() const;
  const std::map<std::string, std::string>& values() const { return values_; }
  void Set(const std::string& key, const std::string& value) { values_[key] = value; }

 private:
  // Records the key; the text to parse (the value, else the declared default), or null
  // when neither is set.
  const std::string* Text(const KeyDecl& key) const;
  // "<owner>: option '<name>'", as errors name the option.
  std::string Shown(const KeyDecl& key) const;
  Status Mismatch(const KeyDecl& key, const char* read_as) const;
  Status Required(const KeyDecl& key) const;
  std::string owner_;
  std::map<std::string, std::string> values_;
  mutable std::vector<KeyDecl> asked_;  // in the order first asked
};

}  // namespace sloserve
