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

// The range of a number flag: [min, max], or (min, max] when min_exclusive; `unit` is
// named in the error ("seconds").
struct FlagRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  std::string unit;
};

// Bounds of the flags that become a Duration (integer microseconds; steady_clock's
// nanoseconds for a wait): every such flag is range-checked, so none can overflow.
inline constexpr double kMaxRunSeconds = 366.0 * 86'400;  // a year: a run's or server's length
inline constexpr double kMaxTimeoutSeconds = 86'400;      // a day: a request's timeout, a wait
inline constexpr double kMaxSloMillis = 86'400'000;       // a day, as the config's slo_ms
// A --seed's range, as the config's `seed`: [0, 2^53] (every seed exact as a double).
inline const FlagRange kSeedRange{.min = 0, .max = 9'007'199'254'740'992};
// A --jobs' range: at least one, at most 1024 threads (each holds a simulation).
inline const FlagRange kJobsRange{.min = 1, .max = 1024};

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
  // GetDouble, and a given value outside `range` is an error naming the flag, the range
  // and the value ("--duration: must be in (0, 31622400] seconds, got 1e10"). The
  // fallback (flag not given) is not checked: it may mean "none" (0 = until stopped).
  StatusOr<double> GetDoubleIn(const std::string& name, double fallback,
                               const FlagRange& range) const;
  // GetInt, and a given value outside `range` is an error as GetDoubleIn's.
  StatusOr<int64_t> GetIntIn(const std::string& name, int64_t fallback,
                             const FlagRange& range) const;

 private:
  std::vector<std::string> positionals_;
  std::map<std::string, std::vector<std::string>> values_;
};

std::string FlagsHelp(const std::vector<FlagSpec>& specs);
// `text` as a finite number, or InvalidArgument naming --flag (for list-valued flags;
// Args::GetDouble uses it too).
StatusOr<double> ParseFlagNumber(const std::string& flag, const std::string& text);
// `value` (parsed from `text`) checked against `range`, the error naming --flag.
StatusOr<double> CheckFlagRange(const std::string& flag, double value, const std::string& text,
                                const FlagRange& range);

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
