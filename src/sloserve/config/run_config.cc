#include "sloserve/config/run_config.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "sloserve/config/hardware_prices.h"
#include "sloserve/core/embedded_files.h"
#include "sloserve/engine/admission.h"
#include "sloserve/profile/profile.h"
#include "sloserve/workload/arrival_spec.h"

namespace sloserve {
namespace {

// Every number has a range (docs/config.md). A time that becomes a Duration (int64
// microseconds) must be bounded: converting 1e53 ms is undefined behaviour (found by
// fuzz_test under UBSan); a rate or scale past its range makes the simulator spin (a
// gap below a microsecond never advances time).
constexpr double kMaxMillis = 86'400'000;       // a day, for SLOs and intervals
constexpr double kMaxSeconds = 366.0 * 86'400;  // a year, for a run's length
// Below a millisecond a plan interval rounds towards 0 us, where the driver would plan
// forever at one instant.
constexpr double kMinIntervalMs = 1;
constexpr double kMaxSeed = 9'007'199'254'740'992;  // 2^53: every seed exact as a double
constexpr double kMaxWorkers = 100'000;

using T = KeyType;

const KeyDecl kName{.name = "name", .help = "experiment name (printed in reports)"};
const KeyDecl kSuite{.name = "suite",
                     .default_value = "ramsis-image",
                     .help =
                         "profile suite: an embedded name (ramsis-image, ramsis-text, "
                         "kairos-recsys, infadapter-resnet, t5-translation) or a path to a "
                         ".prof file"};
const KeyDecl kTask{.name = "task", .help = "task to serve (default: the suite's first)"};
const KeyDecl kHardware{.name = "hardware",
                        .help =
                            "hardware type of every worker, or a mix \"type:n,type:n\" "
                            "(default: the suite's first)"};
const KeyDecl kWorkers{.name = "workers",
                       .type = T::kInteger,
                       .default_value = "1",
                       .min = 1,
                       .max = kMaxWorkers,
                       .help = "number of workers"};
const KeyDecl kWorkersPerMachine{
    .name = "workers_per_machine",
    .type = T::kInteger,
    .default_value = "1",
    .min = 1,
    .max = kMaxWorkers,
    .help =
        "consecutive workers of one hardware type grouped on one machine, sharing its "
        "memory (at most the pool's workers)"};
const KeyDecl kPreload{.name = "preload",
                       .default_value = "all",
                       .help =
                           "variants resident on every worker at start: all, none, or a "
                           "list v1,v2 (others load on first use, a cold start)"};
const KeyDecl kSloMs{.name = "slo_ms",
                     .type = T::kNumber,
                     .default_value = "0",
                     .unit = "ms",
                     .min = 0,
                     .max = kMaxMillis,
                     .help = "latency SLO (0 = the task's default)"};
const KeyDecl kSloMix{.name = "slo_mix",
                      .help =
                          "several SLOs: \"150:1,300:1\" gives each query SLO 150 or 300 ms "
                          "with those weights (pair with dispatch slo_partition)"};
const KeyDecl kSeed{.name = "seed",
                    .type = T::kInteger,
                    .default_value = "1",
                    .min = 0,
                    .max = kMaxSeed,
                    .help = "random seed (arrivals, sizes, sampled latencies)"};
const KeyDecl kDurationS{.name = "duration_s",
                         .type = T::kNumber,
                         .default_value = "30",
                         .unit = "s",
                         .min = 0,
                         .max = kMaxSeconds,
                         .min_exclusive = true,
                         .help =
                             "length of a synthetic arrival process (cuts a trace short "
                             "when set)"};
const KeyDecl kArrival{
    .name = "workload.arrival",
    .type = T::kChoice,
    .default_value = "poisson",
    .choices = {"poisson", "gamma", "constant", "qps_interval_trace", "rps_trace"},
    .help = "arrival process: synthetic, or replayed from workload.trace"};
const KeyDecl kLoadQps{.name = "workload.load_qps",
                       .type = T::kNumber,
                       .default_value = "0",
                       .unit = "queries/s",
                       .min = 0,
                       .max = kMaxArrivalRateQps,
                       .help = "mean offered load of synthetic arrivals (`load_qps` in sweeps)"};
const KeyDecl kCv{.name = "workload.cv",
                  .type = T::kNumber,
                  .default_value = "1",
                  .min = kMinGammaCv,
                  .max = kMaxGammaCv,
                  .help = "gamma: coefficient of variation of inter-arrival times"};
const KeyDecl kTrace{.name = "workload.trace",
                     .type = T::kPath,
                     .help =
                         "trace file (a path, or an embedded trace name under "
                         "profiles/traces)"};
const KeyDecl kWindowStart{.name = "workload.window_start_s",
                           .type = T::kInteger,
                           .default_value = "0",
                           .unit = "s",
                           .min = 0,
                           .max = static_cast<double>(kMaxTraceSecond),
                           .help = "trace: first trace second replayed"};
const KeyDecl kWindowEnd{.name = "workload.window_end_s",
                         .type = T::kInteger,
                         .default_value = "-1",
                         .unit = "s",
                         .min = -1,
                         .max = static_cast<double>(kMaxTraceSecond),
                         .help = "trace: one past the last second replayed (-1 = the end)"};
const KeyDecl kRateScale{.name = "workload.rate_scale",
                         .type = T::kNumber,
                         .default_value = "1",
                         .min = 0,
                         .max = kMaxRateScale,
                         .min_exclusive = true,
                         .help = "trace: multiply every rate"};
const KeyDecl kTimeCompression{.name = "workload.time_compression",
                               .type = T::kNumber,
                               .default_value = "1",
                               .min = 0,
                               .max = kMaxTimeCompression,
                               .min_exclusive = true,
                               .help = "trace: replay c times faster, same number of queries"};
const KeyDecl kSizes{.name = "workload.sizes",
                     .default_value = "constant:1",
                     .unit = "rows",
                     .help = "query sizes: constant:N, deeprecsys or gaussian:MEAN:SD"};
const KeyDecl kAppWeights{.name = "workload.app_weights",
                          .type = T::kNumberList,
                          .min = 0,
                          .help =
                              "weights of the suite's exec_hist apps among arrivals, in "
                              "their order (default: equal; no apps: app 0)"};
const KeyDecl kAppPriorities{.name = "workload.app_priorities",
                             .type = T::kIntegerList,
                             .min = 0,
                             .max = kMaxPriorityLevels,
                             .help =
                                 "priority level of each app's queries, in the order of "
                                 "app_weights (1 = highest, 0 = the default level)"};
const KeyDecl kLatency{.name = "executor.latency",
                       .default_value = "p95",
                       .help =
                           "batch latency from the profile: a percentile such as p95, "
                           "sample, or capacity"};
const KeyDecl kTimeScale{.name = "executor.time_scale",
                         .type = T::kNumber,
                         .default_value = "1",
                         .min = 0,
                         .max = 1000,
                         .help = "multiply every batch duration (0 = instant)"};
const KeyDecl kMaxWorkerQueue{.name = "engine.max_worker_queue",
                              .type = T::kInteger,
                              .default_value = "1000000",
                              .unit = "queries",
                              .min = 1,
                              .max = 1e9,
                              .help = "bound on each worker's queue (sim)"};
const KeyDecl kAdmission{.name = "engine.admission",
                         .type = T::kChoice,
                         .choices = {"on", "off"},
                         .help =
                             "overload protection (docs/admission.md); default: off in "
                             "sim, on in serve"};
const KeyDecl kAdmissionQueue{.name = "engine.admission_queue",
                              .type = T::kInteger,
                              .default_value = "0",
                              .unit = "rows",
                              .min = 0,
                              .max = 1e9,
                              .help = "admission: bound on queued rows (0 = capacity x SLO)"};
const KeyDecl kPriorityLevels{.name = "engine.priority_levels",
                              .type = T::kInteger,
                              .default_value = "2",
                              .min = 1,
                              .max = kMaxPriorityLevels,
                              .help =
                                  "admission: request priority levels, 1 = highest "
                                  "(Triton's `priority`)"};
const KeyDecl kPriorityDefault{.name = "engine.priority_default",
                               .type = T::kInteger,
                               .default_value = "1",
                               .min = 1,
                               .max = kMaxPriorityLevels,
                               .help =
                                   "admission: level of a request that names none (at "
                                   "most engine.priority_levels)"};
const KeyDecl kSeriesInterval{.name = "engine.series_interval_ms",
                              .type = T::kNumber,
                              .default_value = "1000",
                              .unit = "ms",
                              .min = kMinIntervalMs,
                              .max = kMaxMillis,
                              .help = "time-series bucket width"};
const KeyDecl kPlanInterval{.name = "engine.plan_interval_ms",
                            .type = T::kNumber,
                            .default_value = "1000",
                            .unit = "ms",
                            .min = kMinIntervalMs,
                            .max = kMaxMillis,
                            .help = "how often the planning policy is asked"};
const KeyDecl kOfflineDelay{.name = "engine.offline_delay_ms",
                            .type = T::kNumber,
                            .default_value = "0",
                            .unit = "ms",
                            .min = 0,
                            .max = kMaxMillis,
                            .help =
                                "sim: virtual time an offline job (a missing RAMSIS "
                                "policy) takes to deliver"};

const KeyDecl kPolicyName{.name = "policy.name",
                          .help =
                              "label of the policy combination in results (default "
                              "batching/dispatch)"};
const KeyDecl kPolicyDispatch{.name = "policy.dispatch",
                              .default_value = "round_robin",
                              .help = "dispatch policy (list: sloserve policies)"};
const KeyDecl kPolicyBatching{.name = "policy.batching",
                              .default_value = "edf",
                              .help = "batching policy (list: sloserve policies)"};
const KeyDecl kPolicySelection{.name = "policy.selection",
                               .default_value = "fixed",
                               .help = "selection policy (list: sloserve policies)"};
const KeyDecl kPolicyPlacement{.name = "policy.placement",
                               .help =
                                   "placement policy consulted before dispatch (none by "
                                   "default)"};
const KeyDecl kPolicyModelSelection{
    .name = "policy.model_selection",
    .help =
        "multi-model: \"model=selection,...\" replaces those models' own selection policy "
        "(models[].policy.selection) in this run, e.g. one entry of policies: at fixed variants"};
const KeyDecl kPolicyPlanning{.name = "policy.planning",
                              .help =
                                  "planning policy asked every plan interval (none by "
                                  "default)"};

// Data files a policy reads, relative to the config file like every other path.
bool IsPathOption(const std::string& option) {
  return option == "table" || option == "lstm_model";
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
  std::error_code ec;
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

// The workers of a mix "type:n,type:n" (n summed); none for one type without a count or
// a mix ResolveDeployment will refuse.
std::optional<int64_t> MixWorkerCount(const std::string& hardware) {
  int64_t total = 0;
  std::stringstream ss(hardware);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return std::nullopt;
    const std::optional<int64_t> n = ParseInteger(std::string_view(item).substr(colon + 1));
    if (!n || *n < 1 || *n > kMaxWorkers) return std::nullopt;
    total += *n;
  }
  return total > 0 ? std::optional<int64_t>(total) : std::nullopt;
}

// A mix names each type once: "cpu:1,cpu:2" is refused rather than read as two groups
// of one type (its rows and costs would count the type twice).
Status CheckMixTypesDistinct(const std::string& hardware) {
  std::set<std::string> seen;
  std::stringstream ss(hardware);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::string type = item.substr(0, item.find(':'));
    if (!seen.insert(type).second) {
      return InvalidArgumentError("'hardware': type '" + type + "' appears twice in the mix \"" +
                                  hardware + "\" (name each type once, with its total count)");
    }
  }
  return OkStatus();
}

std::string ConfigDir(const FlatConfig& f) {
  auto it = f.find("__config_dir");
  return it == f.end() ? "" : it->second;
}

}  // namespace

Duration SloOfMillis(double slo_ms) {
  return slo_ms > 0 ? std::max(MillisF(slo_ms), Micros(1)) : MillisF(slo_ms);
}

namespace {

// "150:1,300:1" -> (150 ms, 1), (300 ms, 1); the weight defaults to 1.
StatusOr<std::vector<std::pair<Duration, double>>> ParseSloMix(const std::string& mix) {
  std::vector<std::pair<Duration, double>> out;
  std::stringstream ms(mix);
  for (std::string item; std::getline(ms, item, ',');) {
    const size_t colon = item.find(':');
    const std::optional<double> slo = ParseNumber(item.substr(0, colon));
    const std::optional<double> w =
        colon == std::string::npos ? 1.0 : ParseNumber(item.substr(colon + 1));
    if (!slo || !w || !(*slo > 0 && *slo <= kMaxMillis) || !(*w > 0))
      return InvalidArgumentError("'slo_mix': expected slo_ms:weight,..., got \"" + mix + "\"");
    out.emplace_back(SloOfMillis(*slo), *w);
  }
  return out;
}

}  // namespace

const KeyDecl kPlanBudgetKey{.name = "plan.budget_per_hour",
                             .type = T::kNumber,
                             .default_value = "2.5",
                             .unit = "$/h",
                             .min = 0,
                             .max = 1e9,
                             .min_exclusive = true,
                             .help = "`sloserve plan kairos`: cost budget"};
const KeyDecl kPlanMaxInstancesKey{
    .name = "plan.max_instances",
    .help =
        "`sloserve plan kairos`: per-type maximum counts, \"type:n,type:n\" (default: "
        "what the budget allows)"};

const std::vector<const KeyDecl*>& RunKeys() {
  static const std::vector<const KeyDecl*> keys = {&kName,
                                                   &kSuite,
                                                   &kTask,
                                                   &kHardware,
                                                   &HardwarePriceKey(),
                                                   &kWorkers,
                                                   &kWorkersPerMachine,
                                                   &kPreload,
                                                   &kSloMs,
                                                   &kSloMix,
                                                   &kSeed,
                                                   &kDurationS,
                                                   &kArrival,
                                                   &kLoadQps,
                                                   &kCv,
                                                   &kTrace,
                                                   &kWindowStart,
                                                   &kWindowEnd,
                                                   &kRateScale,
                                                   &kTimeCompression,
                                                   &kSizes,
                                                   &kAppWeights,
                                                   &kAppPriorities,
                                                   &kLatency,
                                                   &kTimeScale,
                                                   &kMaxWorkerQueue,
                                                   &kAdmission,
                                                   &kAdmissionQueue,
                                                   &kPriorityLevels,
                                                   &kPriorityDefault,
                                                   &kSeriesInterval,
                                                   &kPlanInterval,
                                                   &kOfflineDelay};
  return keys;
}

const std::vector<const KeyDecl*>& ArrivalKeys() {
  static const std::vector<const KeyDecl*> keys = {&kArrival,   &kLoadQps,        &kCv,
                                                   &kTrace,     &kWindowStart,    &kWindowEnd,
                                                   &kRateScale, &kTimeCompression};
  return keys;
}

const KeyDecl& SloMsKey() {
  return kSloMs;
}

const std::vector<const KeyDecl*>& PolicyNameKeys() {
  static const std::vector<const KeyDecl*> keys = {
      &kPolicyName,      &kPolicyDispatch, &kPolicyBatching,      &kPolicySelection,
      &kPolicyPlacement, &kPolicyPlanning, &kPolicyModelSelection};
  return keys;
}

const std::vector<const KeyDecl*>& PlanKeys() {
  static const std::vector<const KeyDecl*> keys = {&kPlanBudgetKey, &kPlanMaxInstancesKey};
  return keys;
}

std::string PathOfConfig(const std::string& path, const FlatConfig& flat) {
  return ResolveRelative(path, ConfigDir(flat));
}

std::string SuiteOfConfig(const std::string& suite, const FlatConfig& flat) {
  if (suite.find('/') == std::string::npos && !suite.ends_with(kProfileExtension)) return suite;
  return ResolveRelative(suite, ConfigDir(flat));
}

PolicySpec PolicyNamesFromFlat(const FlatConfig& f) {
  PolicySpec p;
  p.name = TextOf(f, kPolicyName);
  p.dispatch = TextOf(f, kPolicyDispatch);
  p.batching = TextOf(f, kPolicyBatching);
  p.selection = TextOf(f, kPolicySelection);
  p.placement = TextOf(f, kPolicyPlacement);
  p.planning = TextOf(f, kPolicyPlanning);
  p.model_selection = TextOf(f, kPolicyModelSelection);
  return p;
}

StatusOr<ArrivalSpec> ArrivalSpecFromFlat(const FlatConfig& f) {
  const std::string config_dir = ConfigDir(f);
  ASSIGN_OR_RETURN(double duration_s, NumberOf(f, kDurationS));
  ArrivalSpec a;
  ASSIGN_OR_RETURN(a.kind, ChoiceOf(f, kArrival));
  ASSIGN_OR_RETURN(a.rate_qps, NumberOf(f, kLoadQps));  // 0 = unset (traces do not read it)
  ASSIGN_OR_RETURN(a.cv, NumberOf(f, kCv));
  a.trace_path = ResolveTrace(TextOf(f, kTrace), config_dir);
  ASSIGN_OR_RETURN(a.window_start_s, IntegerOf(f, kWindowStart));
  ASSIGN_OR_RETURN(a.window_end_s, IntegerOf(f, kWindowEnd));
  ASSIGN_OR_RETURN(a.rate_scale, NumberOf(f, kRateScale));
  ASSIGN_OR_RETURN(a.time_compression, NumberOf(f, kTimeCompression));
  const bool is_trace = a.kind.find("trace") != std::string::npos;
  a.horizon = (is_trace && !IsSet(f, kDurationS)) ? Duration(0) : SecondsF(duration_s);
  const bool synthetic = !is_trace;
  if (synthetic && a.rate_qps * duration_s > kMaxExpectedArrivals) {
    std::ostringstream msg;
    msg << "'workload.load_qps' x 'duration_s' = " << a.rate_qps * duration_s
        << " arrivals expected, more than a run can hold (at most " << std::fixed
        << std::setprecision(0) << kMaxExpectedArrivals << ")";
    return InvalidArgumentError(msg.str());
  }
  return a;
}

StatusOr<RunSpec> RunSpecFromFlat(const FlatConfig& f, bool with_workload) {
  RunSpec r;
  const std::string config_dir = ConfigDir(f);
  r.suite = SuiteOfConfig(TextOf(f, kSuite), f);
  r.task = TextOf(f, kTask);
  r.hardware = TextOf(f, kHardware);
  RETURN_IF_ERROR(CheckMixTypesDistinct(r.hardware));
  ASSIGN_OR_RETURN(r.hardware_prices, HardwarePricesFromFlat(f));
  ASSIGN_OR_RETURN(int64_t workers, IntegerOf(f, kWorkers));
  r.workers = static_cast<int>(workers);
  r.preload = TextOf(f, kPreload);
  ASSIGN_OR_RETURN(int64_t per_machine, IntegerOf(f, kWorkersPerMachine));
  // A mix "type:n,type:n" sets the worker count itself.
  const int64_t pool = MixWorkerCount(r.hardware).value_or(workers);
  if (per_machine > pool) {
    return InvalidArgumentError("'workers_per_machine': must be between 1 and workers (" +
                                std::to_string(pool) + ") (got " + std::to_string(per_machine) +
                                ")");
  }
  r.workers_per_machine = static_cast<int>(per_machine);
  ASSIGN_OR_RETURN(double slo_ms, NumberOf(f, kSloMs));
  r.slo = SloOfMillis(slo_ms);
  if (IsSet(f, kSloMix)) {
    ASSIGN_OR_RETURN(r.slo_mix, ParseSloMix(TextOf(f, kSloMix)));
  }
  ASSIGN_OR_RETURN(int64_t seed, IntegerOf(f, kSeed));
  r.seed = static_cast<uint64_t>(seed);
  ASSIGN_OR_RETURN(r.arrival, ArrivalSpecFromFlat(f));
  if (with_workload) {
    if (Status valid = ValidateArrivalSpec(r.arrival); !valid.ok()) {
      // Nothing given is not "rate_qps ... (got 0)": the key the user writes is named.
      if (r.arrival.kind.find("trace") == std::string::npos && !IsSet(f, kLoadQps)) {
        return InvalidArgumentError("'workload.load_qps' is required for workload.arrival '" +
                                    r.arrival.kind +
                                    "' (the mean offered load in qps; e.g. --set load_qps=100)");
      }
      return valid.WithPrefix("workload");
    }
  }
  r.sizes = TextOf(f, kSizes);
  ASSIGN_OR_RETURN(r.app_weights, NumberListOf(f, kAppWeights));
  double total = 0;
  for (double w : r.app_weights) total += w;
  if (!r.app_weights.empty() && !(total > 0))
    return InvalidArgumentError("'workload.app_weights': need a positive weight");

  ASSIGN_OR_RETURN(r.service, ParseServiceTimeMode(TextOf(f, kLatency)));
  ASSIGN_OR_RETURN(r.service.time_scale, NumberOf(f, kTimeScale));
  ASSIGN_OR_RETURN(int64_t maxq, IntegerOf(f, kMaxWorkerQueue));
  r.max_worker_queue = static_cast<size_t>(maxq);
  if (IsSet(f, kAdmission)) {
    ASSIGN_OR_RETURN(std::string admission, ChoiceOf(f, kAdmission));
    r.admission = admission == "on";
  }
  ASSIGN_OR_RETURN(r.admission_queue, IntegerOf(f, kAdmissionQueue));
  ASSIGN_OR_RETURN(int64_t levels, IntegerOf(f, kPriorityLevels));
  ASSIGN_OR_RETURN(int64_t default_level, IntegerOf(f, kPriorityDefault));
  RETURN_IF_ERROR(ValidatePriorityLevels(levels, default_level));
  r.priority_levels = static_cast<int32_t>(levels);
  r.priority_default = static_cast<int32_t>(default_level);
  ASSIGN_OR_RETURN(std::vector<int64_t> priorities, IntegerListOf(f, kAppPriorities));
  for (int64_t p : priorities) {
    if (p > r.priority_levels)
      return InvalidArgumentError(
          "'workload.app_priorities': expected levels 0.." + std::to_string(r.priority_levels) +
          " (engine.priority_levels; 0 = default), got " + std::to_string(p));
    r.app_priorities.push_back(static_cast<int32_t>(p));
  }
  ASSIGN_OR_RETURN(double interval_ms, NumberOf(f, kSeriesInterval));
  r.series_interval = MillisF(interval_ms);
  ASSIGN_OR_RETURN(double plan_ms, NumberOf(f, kPlanInterval));
  r.plan_interval = MillisF(plan_ms);
  ASSIGN_OR_RETURN(double offline_ms, NumberOf(f, kOfflineDelay));
  r.offline_delay = MillisF(offline_ms);

  PolicySpec& p = r.policy;
  p = PolicyNamesFromFlat(f);
  for (const auto& [k, v] : f) {
    if (k.rfind("policy.", 0) != 0) continue;
    const std::string option = k.substr(7);
    bool is_name = false;
    for (const KeyDecl* key : PolicyNameKeys()) is_name = is_name || key->name == k;
    if (is_name) continue;
    p.options[option] = IsPathOption(option) ? ResolveRelative(v, config_dir) : v;
  }
  return r;
}

}  // namespace sloserve
