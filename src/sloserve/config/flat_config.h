#pragma once
// A config file flattened to dotted keys ("workload.load_qps" -> "200"), and typed reads
// of it through the keys' declarations (core/declared_key.h): the default comes from the
// declaration, the value is checked against its type and range, and the error names the
// key. An empty value (`key:` with nothing after it) reads as unset.
#include <map>
#include <string>
#include <vector>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/status.h"

namespace sloserve {

using FlatConfig = std::map<std::string, std::string>;

// The key's text in `flat`, or its declared default when unset.
std::string TextOf(const FlatConfig& flat, const KeyDecl& key);
bool IsSet(const FlatConfig& flat, const KeyDecl& key);
StatusOr<double> NumberOf(const FlatConfig& flat, const KeyDecl& key);
StatusOr<int64_t> IntegerOf(const FlatConfig& flat, const KeyDecl& key);
StatusOr<bool> BoolOf(const FlatConfig& flat, const KeyDecl& key);
StatusOr<std::string> ChoiceOf(const FlatConfig& flat, const KeyDecl& key);
StatusOr<std::vector<double>> NumberListOf(const FlatConfig& flat, const KeyDecl& key);
StatusOr<std::vector<int64_t>> IntegerListOf(const FlatConfig& flat, const KeyDecl& key);

}  // namespace sloserve
