#include "cli_args.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sloserve/core/declared_key.h"

namespace sloserve::cli {
namespace {
const std::string kHelpFlag = "--help";
}  // namespace

StatusOr<Args> Args::Parse(const std::vector<std::string>& argv,
                           const std::vector<FlagSpec>& specs) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    // -h is the one short option: every command's help (a positional "-h" would be taken
    // for a config file or a subcommand).
    const std::string& arg = argv[i] == "-h" ? kHelpFlag : argv[i];
    if (arg.size() < 2 || arg.rfind("--", 0) != 0) {
      a.positionals_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (!spec) return InvalidArgumentError("unknown option --" + name + " (see --help)");
    if (spec->value_name.empty()) {
      if (has_value) return InvalidArgumentError("option --" + name + " takes no value");
      value = "true";
    } else if (!has_value) {
      if (i + 1 >= argv.size()) return InvalidArgumentError("option --" + name + " needs a value");
      value = argv[++i];
    }
    if (!spec->repeatable && a.values_.count(name)) {
      return InvalidArgumentError("option --" + name + " given twice");
    }
    a.values_[name].push_back(value);
  }
  return a;
}

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Args::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

StatusOr<double> ParseFlagNumber(const std::string& flag, const std::string& text) {
  const std::optional<double> v = ParseNumber(text);
  if (!v) return InvalidArgumentError("--" + flag + ": expected a number, got \"" + text + "\"");
  return *v;
}

StatusOr<double> Args::GetDouble(const std::string& name, double fallback) const {
  if (!Has(name)) return fallback;
  return ParseFlagNumber(name, Get(name));
}

StatusOr<double> CheckFlagRange(const std::string& flag, double value, const std::string& text,
                                const FlagRange& range) {
  const bool above_min = range.min_exclusive ? value > range.min : value >= range.min;
  if (above_min && value <= range.max) return value;
  const KeyDecl bounds{.min = range.min, .max = range.max, .min_exclusive = range.min_exclusive};
  return InvalidArgumentError("--" + flag + ": must be in " + AllowedText(bounds) +
                              (range.unit.empty() ? "" : " " + range.unit) + ", got " + text);
}

StatusOr<double> Args::GetDoubleIn(const std::string& name, double fallback,
                                   const FlagRange& range) const {
  if (!Has(name)) return fallback;
  ASSIGN_OR_RETURN(double v, ParseFlagNumber(name, Get(name)));
  return CheckFlagRange(name, v, Get(name), range);
}

StatusOr<int64_t> Args::GetInt(const std::string& name, int64_t fallback) const {
  ASSIGN_OR_RETURN(double v, GetDouble(name, static_cast<double>(fallback)));
  // Beyond 2^53 a double is no longer every integer, and the cast could overflow.
  if (v != std::floor(v) || std::fabs(v) > 9e15)
    return InvalidArgumentError("--" + name + ": expected an integer, got \"" + Get(name) + "\"");
  return static_cast<int64_t>(v);
}

StatusOr<int64_t> Args::GetIntIn(const std::string& name, int64_t fallback,
                                 const FlagRange& range) const {
  ASSIGN_OR_RETURN(int64_t v, GetInt(name, fallback));
  if (!Has(name)) return v;
  RETURN_IF_ERROR(CheckFlagRange(name, static_cast<double>(v), Get(name), range).status());
  return v;
}

std::string FlagsHelp(const std::vector<FlagSpec>& specs) {
  std::string out;
  for (const FlagSpec& s : specs) {
    std::string left = "  --" + s.name + (s.value_name.empty() ? "" : " " + s.value_name);
    if (left.size() < 26)
      left += std::string(26 - left.size(), ' ');
    else
      left += "  ";
    out += left + s.help + (s.repeatable ? " (repeatable)" : "") + "\n";
  }
  return out;
}

// Control bytes from a config value or argument, echoed in an error, are shown as \xNN
// so they cannot move the cursor, clear the line or forge output (newlines and tabs of
// multi-line messages stay).
std::string EscapeControlBytes(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

int RunSubcommand(const std::string& name, const std::vector<std::string>& argv,
                  const std::vector<FlagSpec>& flags, const std::function<void()>& print_help,
                  const std::function<Status(const Args&)>& run, size_t max_positionals) {
  auto args = Args::Parse(argv, flags);
  if (!args.ok()) {
    std::fprintf(stderr, "sloserve %s: %s\n", name.c_str(),
                 EscapeControlBytes(args.status().message()).c_str());
    return 2;
  }
  if (args->Has("help")) {
    print_help();
    return 0;
  }
  // A stray word (`loadgen foo`) is a mistake, not something to ignore.
  if (args->positionals().size() > max_positionals) {
    std::fprintf(stderr, "sloserve %s: unexpected argument '%s' (see sloserve %s --help)\n",
                 name.c_str(), EscapeControlBytes(args->positionals()[max_positionals]).c_str(),
                 name.c_str());
    return 2;
  }
  Status st = run(*args);
  if (!st.ok()) {
    std::fprintf(stderr, "sloserve %s: %s\n", name.c_str(),
                 EscapeControlBytes(st.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace sloserve::cli
