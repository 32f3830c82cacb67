#include "sloserve/sim/experiment_config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/core/embedded_files.h"
#include "sloserve/engine/admission.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

const std::vector<std::pair<std::string, std::string>> kKeys = {
    {"name", "experiment name (printed in reports)"},
    {"suite",
     "profile suite: embedded name (ramsis-image, ramsis-text, kairos-recsys, "
     "infadapter-resnet) or a path to a .prof file"},
    {"task", "task to serve (default: the suite's first)"},
    {"hardware", "hardware type of every worker (default: the suite's first)"},
    {"workers", "number of workers"},
    {"workers_per_machine",
     "workers grouped on one machine, sharing its memory (default 1: a machine each)"},
    {"preload",
     "variants resident on every worker at start: all (default), none, or a list "
     "v1,v2 (others load on first use, a cold start)"},
    {"slo_ms", "latency SLO in ms (default: the task's default)"},
    {"slo_mix",
     "several SLOs: \"150:1,300:1\" gives each query SLO 150 or 300 ms with those "
     "weights (pair with dispatch slo_partition)"},
    {"seed", "random seed (arrivals, sizes, sampled latencies)"},
    {"duration_s", "length of a synthetic arrival process in seconds (default 30)"},
    {"workload.arrival", "poisson | gamma | constant | qps_interval_trace | rps_trace"},
    {"workload.load_qps", "mean offered load for synthetic arrivals (queries/s, at most 1000000)"},
    {"workload.cv", "gamma: coefficient of variation of inter-arrival times (0.001..100)"},
    {"workload.trace", "trace file (path, or an embedded trace name under profiles/traces)"},
    {"workload.window_start_s", "trace: first trace second replayed"},
    {"workload.window_end_s", "trace: one past the last second replayed (-1 = end)"},
    {"workload.rate_scale", "trace: multiply every rate"},
    {"workload.time_compression", "trace: replay c times faster, same number of queries"},
    {"workload.sizes", "query sizes (rows): constant:N, deeprecsys or gaussian:MEAN:SD"},
    {"workload.app_weights",
     "apps of arrivals: comma-separated weights, one per exec_hist app of the suite "
     "(default: equal; no apps: app 0)"},
    {"workload.app_priorities",
     "priority of each app's queries, in the order of app_weights (1 = highest, 0 = default)"},
    {"executor.latency", "batch latency from the profile: a percentile such as p95, or sample"},
    {"executor.time_scale", "multiply every batch duration (0..1000; 0 = instant)"},
    {"engine.max_worker_queue", "admission bound per worker queue"},
    {"engine.admission",
     "overload protection (docs/admission.md): on | off (default: off in sim, on in serve)"},
    {"engine.admission_queue",
     "admission: bound on queued rows, 0 = capacity x SLO (default 0; 0..1e9)"},
    {"engine.priority_levels",
     "admission: request priority levels, 1 = highest (Triton's `priority`; default 2; 1..16)"},
    {"engine.priority_default",
     "admission: level of a request that names none (priority 0; default 1; 1..levels)"},
    {"engine.series_interval_ms", "time-series bucket width in ms (default 1000)"},
    {"engine.plan_interval_ms", "how often the planning policy is asked, in ms (default 1000)"},
    {"engine.offline_delay_ms",
     "virtual time an offline job (a missing RAMSIS policy) takes to deliver, in ms (default 0)"},
    {"policy.name", "label of the policy combination in results"},
    {"policy.dispatch", "dispatch policy by name (list: sloserve policies)"},
    {"policy.batching", "batching policy by name (list: sloserve policies)"},
    {"policy.selection", "selection policy by name (list: sloserve policies)"},
    {"policy.placement", "placement policy consulted before dispatch (sloserve policies)"},
    {"policy.planning", "planning policy asked every plan interval (static, rate)"},
    {"policy.<option>",
     "any other policy.* key is an option of those policies (e.g. "
     "policy.variant)"},
    {"server.<option>", "settings read by `sloserve serve` (see docs/serve.md)"},
    {"plan.budget_per_hour", "`sloserve plan kairos`: cost budget in $/h (default 2.5)"},
    {"plan.max_instances",
     "`sloserve plan kairos`: per-type maximum counts, \"type:n,type:n\" (default: what "
     "the budget allows)"},
};

bool KnownKey(const std::string& key) {
  if (key.rfind("policy.", 0) == 0 || key.rfind("server.", 0) == 0) return true;
  for (const auto& [k, d] : kKeys) {
    if (k == key) return true;
  }
  return false;
}

// "unknown key 'workload.lod_qps' (did you mean 'workload.load_qps'? keys under
// 'workload.': ...; see docs/sim.md)": a key in a known section lists that section's
// keys, any other key every key.
Status UnknownKey(const std::string& what, const std::string& key) {
  std::vector<std::string> names, all, section;
  const size_t dot = key.find('.');
  const std::string prefix = dot == std::string::npos ? "" : key.substr(0, dot + 1);
  for (const auto& [k, d] : kKeys) {
    all.push_back(k);
    if (k.find('<') == std::string::npos) names.push_back(k);
    if (!prefix.empty() && k.rfind(prefix, 0) == 0) section.push_back(k);
  }
  const std::string listed = section.empty() ? "valid keys: " + JoinNames(all)
                                             : "keys under '" + prefix + "': " + JoinNames(section);
  return InvalidArgumentError(what + " '" + key + "' (" + DidYouMean(key, names) + listed +
                              "; see docs/sim.md)");
}

std::string ScalarText(const YAML::Node& n) {
  return n.Scalar();
}

std::string Where(const std::string& origin, const YAML::Node& n) {
  return origin + ":" + std::to_string(n.Mark().line + 1);
}

Status Flatten(const YAML::Node& node, const std::string& prefix, const std::string& origin,
               FlatConfig* out) {
  if (!node.IsMap()) {
    return InvalidArgumentError(Where(origin, node) + ": '" + prefix + "' must be a mapping");
  }
  for (const auto& kv : node) {
    std::string key =
        prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>();
    if (kv.second.IsMap()) {
      RETURN_IF_ERROR(Flatten(kv.second, key, origin, out));
    } else if (kv.second.IsScalar()) {
      (*out)[key] = ScalarText(kv.second);
    } else if (kv.second.IsNull()) {
      (*out)[key] = "";
    } else {
      return InvalidArgumentError(Where(origin, kv.second) + ": key '" + key +
                                  "' must be a single value (lists go under 'sweep:')");
    }
  }
  return OkStatus();
}

Status CheckKeys(const FlatConfig& flat, const std::string& origin) {
  for (const auto& [k, v] : flat) {
    if (!KnownKey(k)) return UnknownKey(origin + ": unknown key", k);
  }
  return OkStatus();
}

StatusOr<double> Number(const FlatConfig& f, const std::string& key, double fallback) {
  auto it = f.find(key);
  if (it == f.end() || it->second.empty()) return fallback;
  const char* s = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || errno != 0 || !std::isfinite(v)) {
    return InvalidArgumentError("'" + key + "': expected a number, got \"" + it->second + "\"");
  }
  return v;
}

StatusOr<int64_t> Integer(const FlatConfig& f, const std::string& key, int64_t fallback) {
  ASSIGN_OR_RETURN(double v, Number(f, key, static_cast<double>(fallback)));
  if (v != std::floor(v) || std::fabs(v) > 9e15) {
    return InvalidArgumentError("'" + key + "': expected an integer, got \"" + f.at(key) + "\"");
  }
  return static_cast<int64_t>(v);
}

// Every number has a range (docs/sim.md "Ranges"). A time that becomes a Duration (int64
// microseconds) must be bounded: converting 1e53 ms is undefined behaviour (found by
// fuzz_test under UBSan); a rate or scale past its range makes the simulator spin (a
// gap below a microsecond never advances time). `lo` itself is allowed unless `lo_open`.
Status CheckRange(const std::string& key, double v, double lo, bool lo_open, double hi) {
  if ((lo_open ? v > lo : v >= lo) && v <= hi) return OkStatus();
  std::ostringstream msg;
  msg << "'" << key << "': must be in " << (lo_open ? "(" : "[") << lo << ", " << std::fixed
      << std::setprecision(0) << hi << "] (got " << std::defaultfloat << std::setprecision(6) << v
      << ")";
  return InvalidArgumentError(msg.str());
}
constexpr double kMaxMillis = 86'400'000;       // a day, for SLOs and intervals
constexpr double kMaxSeconds = 366.0 * 86'400;  // a year, for a run's length
// Below a millisecond a plan interval rounds towards 0 us, where the driver would plan
// forever at one instant.
constexpr double kMinIntervalMs = 1;
constexpr double kMaxTimeScale = 1000;              // executor.time_scale
constexpr double kMaxWorkerQueue = 1e9;             // engine.max_worker_queue
constexpr double kMaxSeed = 9'007'199'254'740'992;  // 2^53: every seed exact as a double

bool IsSyntheticArrival(const std::string& kind) {
  return kind == "poisson" || kind == "gamma" || kind == "constant";
}

std::string Text(const FlatConfig& f, const std::string& key, const std::string& fallback) {
  auto it = f.find(key);
  return it == f.end() || it->second.empty() ? fallback : it->second;
}

// A relative path in a config file is relative to that file's folder; a path that is
// not there (e.g. given with --set from another folder) is tried as given.
std::string ResolveRelative(const std::string& path, const std::string& config_dir) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute() || config_dir.empty()) return path;
  fs::path candidate = fs::path(config_dir) / path;
  std::error_code ec;  // a name too long for the OS, say, is "not there", not a throw
  return fs::exists(candidate, ec) ? candidate.string() : path;
}

// A trace file next to the config (or as given), else an embedded trace by name
// ("twitter_04_25_norm" or "twitter_04_25_norm.txt"; $SLOSERVE_PROFILES_DIR/traces
// replaces the embedded ones when set).
std::string ResolveTrace(const std::string& trace, const std::string& config_dir) {
  namespace fs = std::filesystem;
  if (trace.empty()) return trace;
  const std::string local = ResolveRelative(trace, config_dir);
  std::error_code ec;  // a name too long for the OS, say, is "not there", not a throw
  if (fs::exists(local, ec)) return local;
  for (const std::string& name : {trace, trace + ".txt"}) {
    if (const std::string dir = ProfilesDir(); !dir.empty()) {
      fs::path p = fs::path(dir) / "traces" / name;
      if (fs::exists(p, ec)) return p.string();
    } else if (FindEmbeddedFile("traces/" + name)) {
      return std::string(kEmbeddedPrefix) + "traces/" + name;
    }
  }
  return trace;  // the arrival factory reports it missing
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& ConfigKeys() {
  return kKeys;
}

StatusOr<ExperimentConfig> ParseExperimentConfig(const std::string& text,
                                                 const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  ExperimentConfig cfg;
  if (root.IsNull()) return cfg;
  if (!root.IsMap()) return InvalidArgumentError(origin + ": top level must be a mapping");
  try {
    YAML::Node rest = YAML::Clone(root);
    if (root["sweep"]) {
      const YAML::Node& sweep = root["sweep"];
      if (!sweep.IsMap())
        return InvalidArgumentError(Where(origin, sweep) + ": 'sweep' must map keys to lists");
      for (const auto& kv : sweep) {
        std::string key = kv.first.as<std::string>();
        if (key == "load_qps") key = "workload.load_qps";
        std::vector<std::string> values;
        if (kv.second.IsSequence()) {
          for (const auto& v : kv.second) {
            if (!v.IsScalar())
              return InvalidArgumentError(Where(origin, v) + ": sweep values must be scalars");
            values.push_back(v.Scalar());
          }
        } else if (kv.second.IsScalar()) {
          values.push_back(kv.second.Scalar());
        }
        if (values.empty())
          return InvalidArgumentError(Where(origin, kv.second) + ": sweep '" + key + "' is empty");
        if (!KnownKey(key)) return UnknownKey(Where(origin, kv.first) + ": unknown sweep key", key);
        cfg.sweep.emplace_back(key, values);
      }
      rest.remove("sweep");
    }
    if (root["policies"]) {
      const YAML::Node& list = root["policies"];
      if (!list.IsSequence())
        return InvalidArgumentError(Where(origin, list) + ": 'policies' must be a list");
      for (const auto& item : list) {
        FlatConfig p;
        RETURN_IF_ERROR(Flatten(item, "policy", origin, &p));
        cfg.policies.push_back(std::move(p));
      }
      rest.remove("policies");
    }
    RETURN_IF_ERROR(Flatten(rest, "", origin, &cfg.base));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  RETURN_IF_ERROR(CheckKeys(cfg.base, origin));
  cfg.name = Text(cfg.base, "name", "");
  std::string dir = std::filesystem::path(origin).parent_path().string();
  cfg.base["__config_dir"] = dir;
  return cfg;
}

StatusOr<ExperimentConfig> LoadExperimentConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseExperimentConfig(ss.str(), path);
}

Status ApplyOverrides(ExperimentConfig* config, const std::vector<std::string>& sets) {
  for (const std::string& s : sets) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--set '" + s + "': expected key=value");
    }
    std::string key = s.substr(0, eq);
    std::string value = s.substr(eq + 1);
    if (key == "load_qps") key = "workload.load_qps";
    if (!KnownKey(key)) return UnknownKey("--set: unknown key", key);
    // An override replaces any sweep over the same key.
    std::erase_if(config->sweep, [&](const auto& axis) { return axis.first == key; });
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
      std::vector<std::string> values;
      std::stringstream ss(value.substr(1, value.size() - 2));
      for (std::string item; std::getline(ss, item, ',');) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) values.push_back(item);
      }
      if (values.empty()) return InvalidArgumentError("--set " + key + ": empty list");
      config->sweep.emplace_back(key, values);
    } else if (value.empty()) {
      // "key=" removes the key (e.g. a policy option the new policy does not take).
      config->base.erase(key);
      for (FlatConfig& p : config->policies) p.erase(key);
    } else {
      config->base[key] = value;
      if (key.rfind("policy.", 0) == 0) {
        for (FlatConfig& p : config->policies) p[key] = value;
      }
    }
  }
  return OkStatus();
}

StatusOr<RunSpec> RunSpecFromFlat(const FlatConfig& f, bool with_workload) {
  RunSpec r;
  r.suite = Text(f, "suite", "ramsis-image");
  if (r.suite.find('/') != std::string::npos || r.suite.ends_with(".prof")) {
    r.suite = ResolveRelative(r.suite, Text(f, "__config_dir", ""));
  }
  r.task = Text(f, "task", "");
  r.hardware = Text(f, "hardware", "");
  ASSIGN_OR_RETURN(int64_t workers, Integer(f, "workers", 1));
  if (workers < 1 || workers > 100000) {
    return InvalidArgumentError("'workers': must be between 1 and 100000 (got " +
                                std::to_string(workers) + ")");
  }
  r.workers = static_cast<int>(workers);
  r.preload = Text(f, "preload", "all");
  ASSIGN_OR_RETURN(int64_t per_machine, Integer(f, "workers_per_machine", 1));
  if (per_machine < 1 || per_machine > workers) {
    return InvalidArgumentError("'workers_per_machine': must be between 1 and workers (" +
                                std::to_string(workers) + ") (got " + std::to_string(per_machine) +
                                ")");
  }
  r.workers_per_machine = static_cast<int>(per_machine);
  ASSIGN_OR_RETURN(double slo_ms, Number(f, "slo_ms", 0));
  RETURN_IF_ERROR(CheckRange("slo_ms", slo_ms, 0, false, kMaxMillis));
  r.slo = MillisF(slo_ms);
  if (std::string mix = Text(f, "slo_mix", ""); !mix.empty()) {
    std::stringstream ms(mix);
    for (std::string item; std::getline(ms, item, ',');) {
      size_t colon = item.find(':');
      const std::string head = item.substr(0, colon);  // kept alive: e1 points into it
      char* e1 = nullptr;
      char* e2 = nullptr;
      double slo = std::strtod(head.c_str(), &e1);
      double w = colon == std::string::npos ? 1.0 : std::strtod(item.c_str() + colon + 1, &e2);
      if (item.empty() || *e1 != '\0' || (e2 && *e2 != '\0') || !(slo > 0 && slo <= kMaxMillis) ||
          !(w > 0 && std::isfinite(w))) {
        return InvalidArgumentError("'slo_mix': expected slo_ms:weight,..., got \"" + mix + "\"");
      }
      r.slo_mix.emplace_back(MillisF(slo), w);
    }
  }
  ASSIGN_OR_RETURN(int64_t seed, Integer(f, "seed", 1));
  // Reported as a number: a negative seed became 2^64 - n and printed as -2^63.
  RETURN_IF_ERROR(CheckRange("seed", static_cast<double>(seed), 0, false, kMaxSeed));
  r.seed = static_cast<uint64_t>(seed);
  ASSIGN_OR_RETURN(double duration_s, Number(f, "duration_s", 30));
  RETURN_IF_ERROR(CheckRange("duration_s", duration_s, 0, true, kMaxSeconds));

  ArrivalSpec& a = r.arrival;
  a.kind = Text(f, "workload.arrival", "poisson");
  // The ranges of ArrivalSpec (ValidateArrivalSpec), checked here to name the keys;
  // load_qps 0 means unset (trace kinds do not read it).
  ASSIGN_OR_RETURN(a.rate_qps, Number(f, "workload.load_qps", 0));
  RETURN_IF_ERROR(CheckRange("workload.load_qps", a.rate_qps, 0, false, kMaxArrivalRateQps));
  ASSIGN_OR_RETURN(a.cv, Number(f, "workload.cv", 1));
  RETURN_IF_ERROR(CheckRange("workload.cv", a.cv, kMinGammaCv, false, kMaxGammaCv));
  a.trace_path = ResolveTrace(Text(f, "workload.trace", ""), Text(f, "__config_dir", ""));
  ASSIGN_OR_RETURN(a.window_start_s, Integer(f, "workload.window_start_s", 0));
  RETURN_IF_ERROR(CheckRange("workload.window_start_s", static_cast<double>(a.window_start_s), 0,
                             false, static_cast<double>(kMaxTraceSecond)));
  ASSIGN_OR_RETURN(a.window_end_s, Integer(f, "workload.window_end_s", -1));
  RETURN_IF_ERROR(CheckRange("workload.window_end_s", static_cast<double>(a.window_end_s), -1,
                             false, static_cast<double>(kMaxTraceSecond)));
  ASSIGN_OR_RETURN(a.rate_scale, Number(f, "workload.rate_scale", 1));
  RETURN_IF_ERROR(CheckRange("workload.rate_scale", a.rate_scale, 0, true, kMaxRateScale));
  ASSIGN_OR_RETURN(a.time_compression, Number(f, "workload.time_compression", 1));
  RETURN_IF_ERROR(
      CheckRange("workload.time_compression", a.time_compression, 0, true, kMaxTimeCompression));
  bool is_trace = a.kind.find("trace") != std::string::npos;
  a.horizon = (is_trace && !f.count("duration_s")) ? Duration(0) : SecondsF(duration_s);
  if (IsSyntheticArrival(a.kind) && a.rate_qps * duration_s > kMaxExpectedArrivals) {
    std::ostringstream msg;
    msg << "'workload.load_qps' x 'duration_s' = " << a.rate_qps * duration_s
        << " arrivals expected, more than a run can hold (at most " << std::fixed
        << std::setprecision(0) << kMaxExpectedArrivals << ")";
    return InvalidArgumentError(msg.str());
  }
  if (with_workload) RETURN_IF_ERROR(ValidateArrivalSpec(a).WithPrefix("workload"));
  r.sizes = Text(f, "workload.sizes", "constant:1");
  {
    std::stringstream ws(Text(f, "workload.app_weights", ""));
    for (std::string item; std::getline(ws, item, ',');) {
      char* end = nullptr;
      errno = 0;
      const double w = std::strtod(item.c_str(), &end);
      if (item.empty() || *end != '\0' || errno != 0 || !(w >= 0) || !std::isfinite(w))
        return InvalidArgumentError(
            "'workload.app_weights': expected non-negative numbers, got \"" + item + "\"");
      r.app_weights.push_back(w);
    }
    double total = 0;
    for (double w : r.app_weights) total += w;
    if (!r.app_weights.empty() && !(total > 0))
      return InvalidArgumentError("'workload.app_weights': need a positive weight");
  }

  ASSIGN_OR_RETURN(r.service, ParseServiceTimeMode(Text(f, "executor.latency", "p95")));
  ASSIGN_OR_RETURN(r.service.time_scale, Number(f, "executor.time_scale", 1));
  RETURN_IF_ERROR(CheckRange("executor.time_scale", r.service.time_scale, 0, false, kMaxTimeScale));
  ASSIGN_OR_RETURN(int64_t maxq, Integer(f, "engine.max_worker_queue", 1000000));
  RETURN_IF_ERROR(
      CheckRange("engine.max_worker_queue", static_cast<double>(maxq), 1, false, kMaxWorkerQueue));
  r.max_worker_queue = static_cast<size_t>(maxq);
  if (auto it = f.find("engine.admission"); it != f.end()) {
    if (it->second != "on" && it->second != "off")
      return InvalidArgumentError("'engine.admission': must be on or off, got \"" + it->second +
                                  "\"");
    r.admission = it->second == "on";
  }
  ASSIGN_OR_RETURN(int64_t admission_queue, Integer(f, "engine.admission_queue", 0));
  if (admission_queue < 0 || admission_queue > 1'000'000'000)
    return InvalidArgumentError("'engine.admission_queue': must be 0..1000000000, got " +
                                std::to_string(admission_queue));
  r.admission_queue = admission_queue;
  ASSIGN_OR_RETURN(int64_t levels, Integer(f, "engine.priority_levels", 2));
  ASSIGN_OR_RETURN(int64_t default_level, Integer(f, "engine.priority_default", 1));
  RETURN_IF_ERROR(ValidatePriorityLevels(levels, default_level));
  r.priority_levels = static_cast<int32_t>(levels);
  r.priority_default = static_cast<int32_t>(default_level);
  {
    std::stringstream ps(Text(f, "workload.app_priorities", ""));
    for (std::string item; std::getline(ps, item, ',');) {
      char* end = nullptr;
      errno = 0;
      const long p = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || errno != 0 || p < 0 || p > r.priority_levels)
        return InvalidArgumentError("'workload.app_priorities': expected levels 0.." +
                                    std::to_string(r.priority_levels) +
                                    " (engine.priority_levels; 0 = default), got \"" + item + "\"");
      r.app_priorities.push_back(static_cast<int32_t>(p));
    }
  }
  ASSIGN_OR_RETURN(double interval_ms, Number(f, "engine.series_interval_ms", 1000));
  RETURN_IF_ERROR(
      CheckRange("engine.series_interval_ms", interval_ms, kMinIntervalMs, false, kMaxMillis));
  r.series_interval = MillisF(interval_ms);
  ASSIGN_OR_RETURN(double plan_ms, Number(f, "engine.plan_interval_ms", 1000));
  RETURN_IF_ERROR(
      CheckRange("engine.plan_interval_ms", plan_ms, kMinIntervalMs, false, kMaxMillis));
  r.plan_interval = MillisF(plan_ms);
  ASSIGN_OR_RETURN(double offline_ms, Number(f, "engine.offline_delay_ms", 0));
  RETURN_IF_ERROR(CheckRange("engine.offline_delay_ms", offline_ms, 0, false, kMaxMillis));
  r.offline_delay = MillisF(offline_ms);

  PolicySpec& p = r.policy;
  for (const auto& [k, v] : f) {
    if (k.rfind("policy.", 0) != 0) continue;
    std::string opt = k.substr(7);
    if (opt == "name")
      p.name = v;
    else if (opt == "dispatch")
      p.dispatch = v;
    else if (opt == "batching")
      p.batching = v;
    else if (opt == "selection")
      p.selection = v;
    else if (opt == "placement")
      p.placement = v;
    else if (opt == "planning")
      p.planning = v;
    else if (opt == "table" || opt == "lstm_model")  // data files, relative to the config
      p.options[opt] = ResolveRelative(v, Text(f, "__config_dir", ""));
    else
      p.options[opt] = v;
  }
  return r;
}

StatusOr<std::vector<RunSpec>> ExpandRuns(const ExperimentConfig& config) {
  std::vector<FlatConfig> policies = config.policies;
  if (policies.empty()) policies.push_back({});
  std::vector<RunSpec> runs;
  // Odometer over sweep axes; policies vary fastest so rows group by load.
  std::vector<size_t> idx(config.sweep.size(), 0);
  while (true) {
    for (const FlatConfig& pol : policies) {
      FlatConfig flat = config.base;
      std::map<std::string, std::string> labels;
      for (size_t i = 0; i < config.sweep.size(); ++i) {
        flat[config.sweep[i].first] = config.sweep[i].second[idx[i]];
        labels[config.sweep[i].first] = config.sweep[i].second[idx[i]];
      }
      if (!pol.empty()) {  // a `policies:` entry replaces the base policy's names
        std::erase_if(flat, [](const auto& kv) { return kv.first.rfind("policy.", 0) == 0; });
        for (const auto& [k, v] : config.base) {
          // keep base policy options (e.g. policy.variant) unless the entry sets them
          if (k.rfind("policy.", 0) == 0 && k != "policy.name" && k != "policy.dispatch" &&
              k != "policy.batching" && k != "policy.selection" && k != "policy.placement" &&
              k != "policy.planning" && !pol.count(k)) {
            flat[k] = v;
          }
        }
        for (const auto& [k, v] : pol) flat[k] = v;
        for (size_t i = 0; i < config.sweep.size(); ++i) {
          if (config.sweep[i].first.rfind("policy.", 0) == 0)
            flat[config.sweep[i].first] = config.sweep[i].second[idx[i]];
        }
      }
      auto spec = RunSpecFromFlat(flat);
      if (!spec.ok()) {
        std::string where;
        for (const auto& [k, v] : labels) where += (where.empty() ? "" : ", ") + k + "=" + v;
        return spec.status().WithPrefix(where.empty() ? "config" : "config (" + where + ")");
      }
      spec->labels = labels;
      runs.push_back(std::move(*spec));
    }
    size_t i = 0;
    for (; i < idx.size(); ++i) {
      if (++idx[i] < config.sweep[i].second.size()) break;
      idx[i] = 0;
    }
    if (i == idx.size()) break;
  }
  return runs;
}

}  // namespace sloserve
