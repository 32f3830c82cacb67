#pragma once
// A small argument parser for the subcommands: positionals, `--flag value`,
// `--flag=value`, boolean switches and repeatable options. Unknown flags are errors.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve::cli {

struct FlagSpec {
  std::string name;        // without dashes
  std::string value_name;  // empty = boolean switch
  std::string help;
  bool repeatable = false;
};

class Args {
 public:
  static StatusOr<Args> Parse(const std::vector<std::string>& argv,
                              const std::vector<FlagSpec>& specs);
  const std::vector<std::string>& positionals() const { return positionals_; }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  StatusOr<double> GetDouble(const std::string& name, double fallback) const;
  StatusOr<int64_t> GetInt(const std::string& name, int64_t fallback) const;

 private:
  std::vector<std::string> positionals_;
  std::map<std::string, std::vector<std::string>> values_;
};

std::string FlagsHelp(const std::vector<FlagSpec>& specs);
// `text` as a finite number, or InvalidArgument naming --flag (for list-valued flags;
// Args::GetDouble uses it too).
StatusOr<double> ParseFlagNumber(const std::string& flag, const std::string& text);

// `message` with control bytes (other than newline and tab) written as \xNN.
std::string EscapeControlBytes(std::string_view message);

// The shared shape of a subcommand: parse flags (usage error: exit 2), print help on
// -h/--help (exit 0), refuse more than `max_positionals` positional arguments (exit 2),
// run (failure: one line "sloserve NAME: message" on stderr, exit 1).
inline constexpr size_t kAnyPositionals = static_cast<size_t>(-1);
int RunSubcommand(const std::string& name, const std::vector<std::string>& argv,
                  const std::vector<FlagSpec>& flags, const std::function<void()>& print_help,
                  const std::function<Status(const Args&)>& run,
                  size_t max_positionals = kAnyPositionals);

}  // namespace sloserve::cli
