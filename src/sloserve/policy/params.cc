#include "sloserve/policy/params.h"

#include <algorithm>

namespace sloserve {

bool PolicyParams::Has(const KeyDecl& key) const {
  (void)Text(key);
  return values_.count(key.name) > 0;
}

const std::string* PolicyParams::Text(const KeyDecl& key) const {
  if (std::none_of(asked_.begin(), asked_.end(),
                   [&](const KeyDecl& k) { return k.name == key.name; })) {
    asked_.push_back(key);
  }
  auto it = values_.find(key.name);
  if (it != values_.end()) return &it->second;
  return key.default_value.empty() ? nullptr : &key.default_value;
}

std::string PolicyParams::Shown(const KeyDecl& key) const {
  return (owner_.empty() ? "" : owner_ + ": ") + "option '" + key.name + "'";
}

// A getter that does not fit the declaration is a bug in the policy, said as such.
Status PolicyParams::Mismatch(const KeyDecl& key, const char* read_as) const {
  return InternalError(Shown(key) + ": declared as " + KeyTypeName(key.type) + ", read as " +
                       read_as);
}

Status PolicyParams::Required(const KeyDecl& key) const {
  return InvalidArgumentError(Shown(key) + " is required (" + key.help + ")");
}

StatusOr<std::string> PolicyParams::GetString(const KeyDecl& key) const {
  const std::string* text = Text(key);
  if (key.type == KeyType::kChoice) {
    if (text == nullptr) return Required(key);
    return ChoiceValue(key, *text, Shown(key));
  }
  if (key.type != KeyType::kString && key.type != KeyType::kPath) return Mismatch(key, "string");
  return text == nullptr ? std::string() : *text;
}

StatusOr<double> PolicyParams::GetDouble(const KeyDecl& key) const {
  const std::string* text = Text(key);
  if (key.type != KeyType::kNumber && key.type != KeyType::kInteger) return Mismatch(key, "number");
  if (text == nullptr) return Required(key);
  return NumberValue(key, *text, Shown(key));
}

StatusOr<int64_t> PolicyParams::GetInt(const KeyDecl& key) const {
  const std::string* text = Text(key);
  if (key.type != KeyType::kInteger) return Mismatch(key, "integer");
  if (text == nullptr) return Required(key);
  return IntegerValue(key, *text, Shown(key));
}

StatusOr<bool> PolicyParams::GetBool(const KeyDecl& key) const {
  const std::string* text = Text(key);
  if (key.type != KeyType::kBool) return Mismatch(key, "boolean");
  if (text == nullptr) return Required(key);
  return BoolValue(key, *text, Shown(key));
}

StatusOr<std::vector<double>> PolicyParams::GetNumberList(const KeyDecl& key) const {
  const std::string* text = Text(key);
  if (key.type != KeyType::kNumberList && key.type != KeyType::kIntegerList)
    return Mismatch(key, "number list");
  if (text == nullptr) return std::vector<double>{};
  return NumberListValue(key, *text, Shown(key));
}

Status PolicyParams::CheckAllUsed() const {
  for (const std::string& key : UnusedKeys()) {
    return InvalidArgumentError((owner_.empty() ? "" : owner_ + ": ") + "option '" + key +
                                "': unknown option");
  }
  return OkStatus();
}

std::vector<std::string> PolicyParams::UnusedKeys() const {
  std::vector<std::string> out;
  for (const auto& entry : values_) {
    const std::string& key = entry.first;  // a name, not a binding: clang 14 cannot capture those
    if (std::none_of(asked_.begin(), asked_.end(), [&](const KeyDecl& k) { return k.name == key; }))
      out.push_back(key);
  }
  return out;
}

std::vector<KeyDecl> PolicyParams::AskedKeys() const {
  return asked_;
}

}  // namespace sloserve
