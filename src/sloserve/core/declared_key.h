#pragma once
// Declared configuration keys. Every key a config file, `--set` or a policy accepts is
// declared once, next to the code that reads it: name, type, default, unit, range or
// choices and a one-line description. Parsing, `sloserve config check`, the JSON Schema
// (`sloserve config schema`) and docs/config.md are all made from the declarations.
//
// This module is also the one place numbers are parsed from text (config values, list
// items, protocol fields and data files all call ParseNumber / ParseInteger), so
// NaN, infinities, trailing junk and overflow are refused the same way everywhere.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

enum class KeyType {
  kNumber,       // a finite number
  kInteger,      // a whole number (1e3 and 5.0 are accepted as 1000 and 5)
  kBool,         // true | false (yes/no and 1/0 too)
  kString,       // free text in a documented format
  kChoice,       // one of `choices`
  kPath,         // a file path (relative paths are relative to the config file)
  kNumberList,   // comma-separated numbers, each in the range
  kIntegerList,  // comma-separated whole numbers, each in the range
};

struct KeyDecl {
  std::string name;  // dotted for config keys ("workload.load_qps"), bare for policy options
  KeyType type = KeyType::kString;
  std::string default_value;  // as written in a config; "" = none (unset or computed)
  std::string unit;           // "ms", "s", "qps", "rows", "MiB", ... ("" = none)
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;        // (min, max] instead of [min, max]
  std::vector<std::string> choices;  // kChoice
  std::string help;                  // one line
};

const char* KeyTypeName(KeyType type);
// "[0, 1000]", "(0, 1e+06]", "on | off", "" (no bound): for errors and docs.
std::string AllowedText(const KeyDecl& key);

// The number `text` holds (all of it, finite; leading/trailing spaces allowed), else none.
std::optional<double> ParseNumber(std::string_view text);
// A decimal integer (all of `text`, optional sign, no fraction or exponent), else none.
std::optional<int64_t> ParseInteger(std::string_view text);
// An unsigned integer in `base` (all of `text`), else none.
std::optional<uint64_t> ParseUnsigned(std::string_view text, int base = 10);
// Tokens as JSON and data files write them (request bodies, profiles, traces): all of
// `text`, an optional '-' but no '+', no spaces, no hex; a number must be finite and not
// underflow. False (and `out` unspecified) when `text` is not one. Inline, copy-free and
// with an out-parameter so the per-element loops of hot paths compile to the same code as
// a bare std::from_chars (an optional<double> return measured 2.5% more instructions).
inline bool ParseNumberToken(std::string_view text, double& out) {
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), out);
  return err == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}
inline bool ParseIntegerToken(std::string_view text, int64_t& out) {
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), out);
  return err == std::errc() && end == text.data() + text.size();
}
// Comma-separated numbers ("0.1,0.5,1"), each ParseNumber'd; none when any item is not.
std::optional<std::vector<double>> ParseNumberList(std::string_view text);

// Typed values of a declared key, checked against its type and range. Errors name the
// key (`shown` when given, e.g. "policy option 'headroom'"), the value and the range.
StatusOr<double> NumberValue(const KeyDecl& key, std::string_view text,
                             std::string_view shown = {});
StatusOr<int64_t> IntegerValue(const KeyDecl& key, std::string_view text,
                               std::string_view shown = {});
StatusOr<bool> BoolValue(const KeyDecl& key, std::string_view text, std::string_view shown = {});
StatusOr<std::string> ChoiceValue(const KeyDecl& key, std::string_view text,
                                  std::string_view shown = {});
StatusOr<std::vector<double>> NumberListValue(const KeyDecl& key, std::string_view text,
                                              std::string_view shown = {});
StatusOr<std::vector<int64_t>> IntegerListValue(const KeyDecl& key, std::string_view text,
                                                std::string_view shown = {});
// Checks `text` against the key's type and range, whatever the type (config check).
Status CheckValue(const KeyDecl& key, std::string_view text, std::string_view shown = {});

}  // namespace sloserve
