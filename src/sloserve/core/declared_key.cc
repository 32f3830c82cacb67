#include "sloserve/core/declared_key.h"

#include "sloserve/core/echo_name.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace sloserve {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A bound or value as people write it: whole numbers in full (9007199254740992), others
// in at most 10 significant digits (1e+308, 0.001).
std::string Shortest(double v) {
  std::ostringstream out;
  if (v == std::floor(v) && std::fabs(v) < 1e17) {
    out << std::fixed;
    out.precision(0);
  } else {
    out.precision(10);
  }
  out << v;
  return out.str();
}

std::string Shown(const KeyDecl& key, std::string_view shown) {
  return shown.empty() ? "'" + key.name + "'" : std::string(shown);
}

// The value as typed, cut so a megabyte of junk does not land in a log line.
// A value as given, in at most 10 significant digits (9e+15, 1e+308, -5).
std::string ValueText(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

// The value as typed, cut by the project's one rule for echoed text (core/echo_name.h).
std::string Quoted(std::string_view text) {
  return "\"" + EchoName(text) + "\"";
}

bool InRange(const KeyDecl& key, double v) {
  return (key.min_exclusive ? v > key.min : v >= key.min) && v <= key.max;
}

// "'key': expected a whole number in [1, 256], got "2.5"" when the text is not of the
// key's type; "'key': must be in [0, 1000000] (got 1e+308)" when it is but out of range.
Status Refuse(const KeyDecl& key, std::string_view text, std::string_view shown) {
  std::string what;
  switch (key.type) {
    case KeyType::kInteger:
      what = "a whole number";
      break;
    case KeyType::kNumber:
      what = "a number";
      break;
    case KeyType::kBool:
      what = "true or false";
      break;
    case KeyType::kNumberList:
      what = "comma-separated numbers";
      break;
    case KeyType::kIntegerList:
      what = "comma-separated whole numbers";
      break;
    case KeyType::kChoice:
      what = "one of " + AllowedText(key);
      break;
    default:
      what = "a value";
      break;
  }
  const std::string allowed = key.type == KeyType::kChoice ? "" : AllowedText(key);
  const std::optional<double> v = ParseNumber(text);
  const bool scalar = key.type == KeyType::kNumber || key.type == KeyType::kInteger;
  if (scalar && v && (key.type == KeyType::kNumber || *v == std::floor(*v)) && !InRange(key, *v)) {
    return InvalidArgumentError(Shown(key, shown) + ": must be in " + allowed + " (got " +
                                ValueText(*v) + ")");
  }
  if (!allowed.empty()) what += (scalar ? " in " : ", each in ") + allowed;
  return InvalidArgumentError(Shown(key, shown) + ": expected " + what + ", got " + Quoted(text));
}

}  // namespace

const char* KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kNumber:
      return "number";
    case KeyType::kInteger:
      return "integer";
    case KeyType::kBool:
      return "boolean";
    case KeyType::kString:
      return "string";
    case KeyType::kChoice:
      return "choice";
    case KeyType::kPath:
      return "path";
    case KeyType::kNumberList:
      return "number list";
    case KeyType::kIntegerList:
      return "integer list";
  }
  return "string";
}

std::string AllowedText(const KeyDecl& key) {
  if (key.type == KeyType::kChoice) {
    std::string out;
    for (const std::string& c : key.choices) out += (out.empty() ? "" : " | ") + c;
    return out;
  }
  const bool has_min = std::isfinite(key.min);
  const bool has_max = std::isfinite(key.max);
  if (!has_min && !has_max) return "";
  return std::string(key.min_exclusive ? "(" : "[") + (has_min ? Shortest(key.min) : "-inf") +
         ", " + (has_max ? Shortest(key.max) : "inf") + "]";
}

std::optional<double> ParseNumber(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  const std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  // Overflow gives inf (refused); underflow a usable 0 or subnormal (accepted).
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t v = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || err != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseUnsigned(std::string_view text, int base) {
  uint64_t v = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (text.empty() || err != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<std::vector<double>> ParseNumberList(std::string_view text) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    std::optional<double> v = ParseNumber(item);
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

StatusOr<double> NumberValue(const KeyDecl& key, std::string_view text, std::string_view shown) {
  std::optional<double> v = ParseNumber(text);
  if (!v || !InRange(key, *v) || (key.type == KeyType::kInteger && *v != std::floor(*v)))
    return Refuse(key, text, shown);
  return *v;
}

StatusOr<int64_t> IntegerValue(const KeyDecl& key, std::string_view text, std::string_view shown) {
  std::optional<double> v = ParseNumber(text);
  // 2^53: beyond it a double no longer holds every whole number.
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9'007'199'254'740'992.0 || !InRange(key, *v))
    return Refuse(key, text, shown);
  return static_cast<int64_t>(*v);
}

StatusOr<bool> BoolValue(const KeyDecl& key, std::string_view text, std::string_view shown) {
  text = Trim(text);
  if (text == "true" || text == "yes" || text == "1") return true;
  if (text == "false" || text == "no" || text == "0") return false;
  return Refuse(key, text, shown);
}

StatusOr<std::string> ChoiceValue(const KeyDecl& key, std::string_view text,
                                  std::string_view shown) {
  for (const std::string& c : key.choices) {
    if (c == text) return c;
  }
  return Refuse(key, text, shown);
}

StatusOr<std::vector<double>> NumberListValue(const KeyDecl& key, std::string_view text,
                                              std::string_view shown) {
  std::optional<std::vector<double>> list = ParseNumberList(text);
  if (!list) return Refuse(key, text, shown);
  for (double v : *list) {
    if (!InRange(key, v) || (key.type == KeyType::kIntegerList && v != std::floor(v)))
      return Refuse(key, text, shown);
  }
  return *list;
}

StatusOr<std::vector<int64_t>> IntegerListValue(const KeyDecl& key, std::string_view text,
                                                std::string_view shown) {
  ASSIGN_OR_RETURN(std::vector<double> list, NumberListValue(key, text, shown));
  std::vector<int64_t> out;
  for (double v : list) {
    if (v != std::floor(v) || std::fabs(v) > 9'007'199'254'740'992.0)
      return Refuse(key, text, shown);
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

Status CheckValue(const KeyDecl& key, std::string_view text, std::string_view shown) {
  switch (key.type) {
    case KeyType::kNumber:
      return NumberValue(key, text, shown).status();
    case KeyType::kInteger:
      return IntegerValue(key, text, shown).status();
    case KeyType::kBool:
      return BoolValue(key, text, shown).status();
    case KeyType::kChoice:
      return ChoiceValue(key, text, shown).status();
    case KeyType::kNumberList:
      return NumberListValue(key, text, shown).status();
    case KeyType::kIntegerList:
      return IntegerListValue(key, text, shown).status();
    case KeyType::kString:
    case KeyType::kPath:
      return OkStatus();
  }
  return OkStatus();
}

}  // namespace sloserve
