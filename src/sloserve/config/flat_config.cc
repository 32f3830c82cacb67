#include "sloserve/config/flat_config.h"

namespace sloserve {

std::string TextOf(const FlatConfig& flat, const KeyDecl& key) {
  auto it = flat.find(key.name);
  return it == flat.end() || it->second.empty() ? key.default_value : it->second;
}

bool IsSet(const FlatConfig& flat, const KeyDecl& key) {
  auto it = flat.find(key.name);
  return it != flat.end() && !it->second.empty();
}

StatusOr<double> NumberOf(const FlatConfig& flat, const KeyDecl& key) {
  return NumberValue(key, TextOf(flat, key));
}

StatusOr<int64_t> IntegerOf(const FlatConfig& flat, const KeyDecl& key) {
  return IntegerValue(key, TextOf(flat, key));
}

StatusOr<bool> BoolOf(const FlatConfig& flat, const KeyDecl& key) {
  return BoolValue(key, TextOf(flat, key));
}

StatusOr<std::string> ChoiceOf(const FlatConfig& flat, const KeyDecl& key) {
  return ChoiceValue(key, TextOf(flat, key));
}

StatusOr<std::vector<double>> NumberListOf(const FlatConfig& flat, const KeyDecl& key) {
  const std::string text = TextOf(flat, key);
  if (text.empty()) return std::vector<double>{};
  return NumberListValue(key, text);
}

StatusOr<std::vector<int64_t>> IntegerListOf(const FlatConfig& flat, const KeyDecl& key) {
  const std::string text = TextOf(flat, key);
  if (text.empty()) return std::vector<int64_t>{};
  return IntegerListValue(key, text);
}

}  // namespace sloserve
