#include "sloserve/cluster/cluster_experiment.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/yaml_document.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

using T = KeyType;

// Every key of a cluster experiment (docs/model-aware.md), declared once; anything else is
// a typo. Lists and mappings (policies, sweep, cluster.machines as a list, workload.phases
// and workload.models) are kString here: their shape is checked when they are read.
const KeyDecl kName{.name = "name", .help = "experiment name (printed in reports)"};
const KeyDecl kSuite{
    .name = "suite", .default_value = "t5-translation", .help = "profile suite of the models"};
const KeyDecl kSeed{.name = "seed",
                    .type = T::kInteger,
                    .default_value = "1",
                    .min = 0,
                    .max = 1 << 30,
                    .help = "first seed (run r uses seed + r)"};
const KeyDecl kRuns{.name = "runs",
                    .type = T::kInteger,
                    .default_value = "1",
                    .min = 1,
                    .max = 100000,
                    .help = "seeds per row, averaged"};
const KeyDecl kBreakEven{.name = "break_even_s",
                         .type = T::kNumber,
                         .default_value = "0",
                         .unit = "s",
                         .min = 0,
                         .max = 1e9,
                         .help = "section 6.3's break-even against the first policy (0 = off)"};
const KeyDecl kPolicies{.name = "policies",
                        .help =
                            "list of cluster policies (default: random, colocation, "
                            "colocation_queue, registry, adaptive)"};
const KeyDecl kSweep{.name = "sweep", .help = "dotted key -> list of values"};
const KeyDecl kMachines{.name = "cluster.machines",
                        .type = T::kInteger,
                        .default_value = "8",
                        .min = 1,
                        .max = 100000,
                        .help =
                            "machines of cluster.hardware, or a list of {name, cores, "
                            "memory_mb, cache_mb}"};
const KeyDecl kHardware{.name = "cluster.hardware",
                        .help = "hardware type of the machines (default: the suite's first)"};
const KeyDecl kCacheMb{.name = "cluster.cache_mb",
                       .type = T::kNumber,
                       .default_value = "0",
                       .unit = "MB",
                       .min = 0,
                       .max = 1e12,
                       .help = "per-machine model cache (0 = the machine's memory)"};
// Read wide here; ValidateCluster checks the real ranges and names the key.
const KeyDecl kTargetOngoing{.name = "cluster.target_ongoing_requests",
                             .type = T::kInteger,
                             .default_value = "3",
                             .min = -1e6,
                             .max = 1e6,
                             .help = "requests a replica takes before another is made"};
const KeyDecl kNetworkS{.name = "cluster.network_s",
                        .type = T::kNumber,
                        .default_value = "0",
                        .unit = "s",
                        .min = -1e9,
                        .max = 1e9,
                        .help = "network delay of a registry fetch"};
const KeyDecl kRegistrySpawn{.name = "cluster.registry_spawn",
                             .type = T::kChoice,
                             .default_value = "warm",
                             .choices = {"warm", "random"},
                             .help =
                                 "registry: run a request on the warm proxy's machine when it "
                                 "has free cores (warm), or on a random free machine as the "
                                 "thesis' LCSched does (random)"};
const KeyDecl kColdStart{.name = "cluster.cold_start",
                         .type = T::kChoice,
                         .default_value = "profile",
                         .choices = {"profile", "size"},
                         .help = "load time: the profile's, or load_base_s + load_s_per_gb x GB"};
const KeyDecl kLoadSPerGb{.name = "cluster.load_s_per_gb",
                          .type = T::kNumber,
                          .default_value = "5.1",
                          .unit = "s/GB",
                          .min = 0,
                          .max = 1e6,
                          .help = "cold_start size: seconds per GB of model"};
const KeyDecl kLoadBaseS{.name = "cluster.load_base_s",
                         .type = T::kNumber,
                         .default_value = "1.8",
                         .unit = "s",
                         .min = 0,
                         .max = 1e6,
                         .help = "cold_start size: fixed part of a load"};
const KeyDecl kPrefetchWindow{.name = "cluster.prefetch_window",
                              .type = T::kInteger,
                              .default_value = "50",
                              .min = 1,
                              .max = 1e6,
                              .help = "prefetch: requests in the popularity window"};
const KeyDecl kPrefetchMinShare{.name = "cluster.prefetch_min_share",
                                .type = T::kNumber,
                                .default_value = "0.1",
                                .min = 0,
                                .max = 1,
                                .help = "prefetch: share of the window that makes a model hot"};
const KeyDecl kMaxModelsPerReplica{.name = "cluster.max_models_per_replica",
                                   .type = T::kInteger,
                                   .default_value = "3",
                                   .min = 1,
                                   .max = 1e6,
                                   .help = "multiplexed: models one replica holds"};
const KeyDecl kKind{.name = "workload.kind",
                    .type = T::kChoice,
                    .default_value = "phases",
                    .choices = {"phases", "zipf"},
                    .help = "phases of requests, or a Zipf stream"};
const KeyDecl kProcCores{.name = "workload.proc_cores",
                         .type = T::kInteger,
                         .default_value = "1",
                         .min = -1e6,
                         .max = 1e6,
                         .help = "cores of each request's process"};
const KeyDecl kPreS{.name = "workload.pre_s",
                    .type = T::kNumber,
                    .default_value = "0",
                    .unit = "s",
                    .min = -1e9,
                    .max = 1e9,
                    .help = "work before inference in each request"};
const KeyDecl kPostS{.name = "workload.post_s",
                     .type = T::kNumber,
                     .default_value = "0",
                     .unit = "s",
                     .min = -1e9,
                     .max = 1e9,
                     .help = "work after inference in each request"};
const KeyDecl kPhases{.name = "workload.phases",
                      .help = "phases: list of {model, count, concurrent}"};
const KeyDecl kModel{.name = "workload.model", .help = "phases shorthand: one model"};
const KeyDecl kCount{.name = "workload.count",
                     .type = T::kInteger,
                     .default_value = "1",
                     .min = 1,
                     .max = 1e7,
                     .help = "phases shorthand / a phase: requests"};
const KeyDecl kModels{.name = "workload.models", .help = "zipf: list of base models"};
const KeyDecl kCopies{.name = "workload.copies",
                      .type = T::kInteger,
                      .default_value = "1",
                      .min = 1,
                      .max = 10000,
                      .help = "zipf: copies of each base model"};
const KeyDecl kRateQps{.name = "workload.rate_qps",
                       .type = T::kNumber,
                       .default_value = "1",
                       .unit = "queries/s",
                       .min = 1e-9,
                       .max = 1e9,
                       .help = "zipf: arrival rate"};
const KeyDecl kRequests{.name = "workload.requests",
                        .type = T::kInteger,
                        .default_value = "100",
                        .min = 1,
                        .max = 1e8,
                        .help = "zipf: requests"};
const KeyDecl kZipfS{.name = "workload.zipf_s",
                     .type = T::kNumber,
                     .default_value = "1",
                     .min = 0,
                     .max = 100,
                     .help = "zipf: exponent"};
// Keys of an entry of cluster.machines.
const KeyDecl kMachineCores{.name = "cores", .type = T::kInteger, .min = 1, .max = 1 << 16};
const KeyDecl kMachineMemory{.name = "memory_mb", .type = T::kNumber, .min = 1, .max = 1e12};
const KeyDecl kPhaseCount{
    .name = "count", .type = T::kInteger, .default_value = "1", .min = 1, .max = 1e7};
const KeyDecl kMachineCache{.name = "cache_mb", .type = T::kNumber, .min = 0, .max = 1e12};

Status CheckKeys(const YAML::Node& n, const std::string& prefix) {
  if (!n.IsMap()) return OkStatus();
  for (const auto& kv : n) {
    const std::string key = prefix + kv.first.as<std::string>();
    if (!ClusterExperimentKeys().count(key))
      return InvalidArgumentError("unknown key '" + key + "'");
    if (key == "cluster" || key == "workload") RETURN_IF_ERROR(CheckKeys(kv.second, key + "."));
  }
  return OkStatus();
}

// The declared number at `key`'s dotted name under `root` (`def` replaces the declared
// default, for defaults that depend on other keys).
StatusOr<double> Number(const YAML::Node& root, const KeyDecl& key,
                        std::optional<double> def = std::nullopt) {
  YAML::Node n = root;
  std::stringstream ss(key.name);
  for (std::string part; std::getline(ss, part, '.');) {
    if (!n.IsMap() || !n[part]) {
      if (def) return *def;
      return NumberValue(key, key.default_value, key.name);
    }
    n.reset(n[part]);  // operator= would write into the tree
  }
  return NumberValue(key, n.IsScalar() ? n.Scalar() : "?", key.name);
}

StatusOr<int> Integer(const YAML::Node& root, const KeyDecl& key,
                      std::optional<double> def = std::nullopt) {
  ASSIGN_OR_RETURN(double v, Number(root, key, def));
  return static_cast<int>(v);
}

std::string Text(const YAML::Node& root, const std::string& section, const std::string& key,
                 const std::string& def) {
  if (!root[section] || !root[section][key]) return def;
  return root[section][key].as<std::string>();
}

// Sets a dotted key in the YAML tree; the value is parsed as YAML ("[1,2]" is a list).
Status SetKey(YAML::Node root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgumentError("--set: expected KEY=VALUE, got '" + assignment + "'");
  }
  const std::string key = assignment.substr(0, eq);
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
  // sweep keys are dotted themselves: sweep.cluster.cache_mb
  if (parts.size() > 1 && parts[0] == "sweep") {
    parts = {"sweep", key.substr(6)};
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("--set " + key + ": " + e.what());
  }
  std::vector<YAML::Node> path = {root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = path.back()[parts[i]];
    path.push_back(child);
  }
  YAML::Node last = path.back();
  last[parts.back()] = value;
  return OkStatus();
}

StatusOr<ClusterConfig> BuildConfig(const YAML::Node& root, const ProfileSuite& suite,
                                    uint64_t seed) {
  ClusterConfig c;
  c.seed = seed;
  // Machines: a count of the hardware type, or a list of {name, cores, memory_mb, cache_mb}.
  const std::string hw_name = Text(root, "cluster", "hardware", suite.hardware().front().name);
  const auto hw = suite.FindHardware(hw_name);
  if (!hw) return InvalidArgumentError("cluster.hardware: unknown hardware '" + hw_name + "'");
  const HardwareSpec& h = suite.hardware()[*hw];
  ASSIGN_OR_RETURN(double cache_mb, Number(root, kCacheMb));
  const YAML::Node machines = root["cluster"]["machines"];
  if (machines && machines.IsSequence()) {
    for (size_t i = 0; i < machines.size(); ++i) {
      const YAML::Node m = machines[i];
      ClusterMachine cm;
      cm.name = m["name"] ? m["name"].as<std::string>() : "m" + std::to_string(i);
      ASSIGN_OR_RETURN(int cores, Integer(m, kMachineCores, h.cores));
      ASSIGN_OR_RETURN(double mem, Number(m, kMachineMemory, h.memory_gb * 1024));
      ASSIGN_OR_RETURN(double cache, Number(m, kMachineCache, cache_mb > 0 ? cache_mb : mem));
      cm.cores = cores;
      cm.memory_mb = mem;
      cm.cache_mb = cache;
      c.machines.push_back(cm);
    }
  } else {
    ASSIGN_OR_RETURN(int n, Integer(root, kMachines));
    for (int i = 0; i < n; ++i) {
      c.machines.push_back({"m" + std::to_string(i), h.cores, h.memory_gb * 1024,
                            cache_mb > 0 ? cache_mb : h.memory_gb * 1024});
    }
  }
  // target_ongoing_requests and network_s are range-checked in ValidateCluster, which
  // names the key; read them wide here.
  ASSIGN_OR_RETURN(int target, Integer(root, kTargetOngoing));
  c.target_ongoing_requests = target;
  ASSIGN_OR_RETURN(double network, Number(root, kNetworkS));
  c.network = SecondsF(network);
  const std::string spawn = Text(root, "cluster", "registry_spawn", "warm");
  if (spawn != "warm" && spawn != "random") {
    return InvalidArgumentError("cluster.registry_spawn: 'warm' or 'random', got '" + spawn + "'");
  }
  c.registry_spawn_random = spawn == "random";
  ASSIGN_OR_RETURN(int window, Integer(root, kPrefetchWindow));
  c.prefetch_window = window;
  ASSIGN_OR_RETURN(double share, Number(root, kPrefetchMinShare));
  c.prefetch_min_share = share;
  ASSIGN_OR_RETURN(int k, Integer(root, kMaxModelsPerReplica));
  c.max_models_per_replica = k;
  const std::string cold = Text(root, "cluster", "cold_start", "profile");
  if (cold != "profile" && cold != "size") {
    return InvalidArgumentError("cluster.cold_start: 'profile' or 'size', got '" + cold + "'");
  }
  ASSIGN_OR_RETURN(double per_gb, Number(root, kLoadSPerGb));
  ASSIGN_OR_RETURN(double base_s, Number(root, kLoadBaseS));

  // Models: those the workload names, in the order named.
  auto add_model = [&](const std::string& variant_name, const std::string& name) -> StatusOr<int> {
    for (size_t i = 0; i < c.models.size(); ++i) {
      if (c.models[i].name == name) return static_cast<int>(i);
    }
    const auto v = suite.FindVariant(variant_name);
    if (!v) return InvalidArgumentError("workload: unknown model '" + variant_name + "'");
    const VariantSpec& spec = suite.variants()[*v];
    ClusterModel m;
    m.name = name;
    m.variant = *v;
    m.size_mb = spec.memory_mb;
    m.load_time =
        cold == "size" ? SecondsF(base_s + per_gb * spec.memory_mb / 1024) : spec.load_time;
    const LatencyDistribution* d = suite.Latency(*hw, *v, 1);
    if (d == nullptr) {
      return InvalidArgumentError("workload: model '" + variant_name + "' has no latency on " +
                                  hw_name);
    }
    m.infer_time = d->Mean();
    c.models.push_back(m);
    return static_cast<int>(c.models.size()) - 1;
  };

  const std::string kind = Text(root, "workload", "kind", "phases");
  ClusterWorkload& w = c.workload;
  ASSIGN_OR_RETURN(int cores, Integer(root, kProcCores));
  w.proc_cores = cores;
  ASSIGN_OR_RETURN(double pre, Number(root, kPreS));
  ASSIGN_OR_RETURN(double post, Number(root, kPostS));
  w.pre = SecondsF(pre);
  w.post = SecondsF(post);
  if (kind == "phases") {
    w.kind = ClusterWorkload::Kind::kPhases;
    YAML::Node phases(YAML::NodeType::Sequence);
    if (root["workload"]["phases"]) {
      phases.reset(root["workload"]["phases"]);
    } else if (root["workload"]["model"]) {
      // Shorthand: one sequential phase of `count` requests of `model`.
      YAML::Node one;
      one["model"] = root["workload"]["model"];
      one["count"] = root["workload"]["count"] ? root["workload"]["count"] : YAML::Node(1);
      phases.push_back(one);
    }
    if (!phases || !phases.IsSequence() || phases.size() == 0) {
      return InvalidArgumentError("workload.phases: a list of {model, count, concurrent}");
    }
    for (size_t i = 0; i < phases.size(); ++i) {
      const YAML::Node p = phases[i];
      if (!p["model"])
        return InvalidArgumentError("workload.phases[" + std::to_string(i) + "].model: missing");
      const std::string model = p["model"].as<std::string>();
      ASSIGN_OR_RETURN(int id, add_model(model, model));
      ASSIGN_OR_RETURN(int count, Integer(p, kPhaseCount));
      const bool concurrent = p["concurrent"] && p["concurrent"].as<bool>();
      w.phases.push_back({id, count, concurrent});
    }
  } else if (kind == "zipf") {
    w.kind = ClusterWorkload::Kind::kZipf;
    const YAML::Node models = root["workload"]["models"];
    if (!models || !models.IsSequence() || models.size() == 0) {
      return InvalidArgumentError("workload.models: a list of profiled models");
    }
    ASSIGN_OR_RETURN(int copies, Integer(root, kCopies));
    // Rank order interleaves the base models: copy 0 of each, then copy 1, ...
    for (int k = 0; k < copies; ++k) {
      for (size_t i = 0; i < models.size(); ++i) {
        const std::string base = models[i].as<std::string>();
        RETURN_IF_ERROR(
            add_model(base, copies == 1 ? base : base + "#" + std::to_string(k)).status());
      }
    }
    ASSIGN_OR_RETURN(double rate, Number(root, kRateQps));
    ASSIGN_OR_RETURN(int requests, Integer(root, kRequests));
    ASSIGN_OR_RETURN(double s, Number(root, kZipfS));
    w.rate_qps = rate;
    w.requests = requests;
    w.zipf_s = s;
  } else {
    return InvalidArgumentError("workload.kind: 'phases' or 'zipf', got '" + kind + "'");
  }
  RETURN_IF_ERROR(ValidateCluster(c));
  return c;
}

std::string ScalarText(const YAML::Node& n) {
  return n.IsScalar() ? n.as<std::string>() : "?";
}

}  // namespace

bool IsClusterExperiment(const std::string& yaml_text) {
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    return root.IsMap() && root["cluster"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

namespace {

StatusOr<ClusterExperiment> RunParsed(const std::string& yaml_text, const std::string& origin,
                                      const std::vector<std::string>& sets) {
  ASSIGN_OR_RETURN(YAML::Node root, LoadYamlDocument(yaml_text, origin));
  for (const std::string& s : sets) RETURN_IF_ERROR(SetKey(root, s));
  RETURN_IF_ERROR(CheckKeys(root, ""));
  ClusterExperiment out;
  out.name = root["name"] ? root["name"].as<std::string>() : "";
  const std::string suite_name = root["suite"] ? root["suite"].as<std::string>() : "t5-translation";
  ASSIGN_OR_RETURN(ProfileSuite suite, LoadSuite(suite_name));
  ASSIGN_OR_RETURN(int seed, Integer(root, kSeed));
  ASSIGN_OR_RETURN(int runs, Integer(root, kRuns));
  ASSIGN_OR_RETURN(double break_even, Number(root, kBreakEven));

  std::vector<ClusterPolicy> policies;
  const YAML::Node pn = root["policies"];
  if (!pn) {
    policies = {ClusterPolicy::kRandom, ClusterPolicy::kColocation, ClusterPolicy::kColocationQueue,
                ClusterPolicy::kRegistry, ClusterPolicy::kAdaptive};
  } else if (pn.IsSequence()) {
    for (const auto& p : pn) {
      ASSIGN_OR_RETURN(ClusterPolicy cp, ParseClusterPolicy(p.as<std::string>()));
      policies.push_back(cp);
    }
  } else {
    ASSIGN_OR_RETURN(ClusterPolicy cp, ParseClusterPolicy(pn.as<std::string>()));
    policies.push_back(cp);
  }

  // Sweep: cartesian product of `sweep: {dotted.key: [values]}`.
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  if (root["sweep"]) {
    for (const auto& kv : root["sweep"]) {
      std::vector<std::string> values;
      if (kv.second.IsSequence()) {
        for (const auto& v : kv.second) values.push_back(ScalarText(v));
      } else {
        values.push_back(ScalarText(kv.second));
      }
      axes.push_back({kv.first.as<std::string>(), values});
    }
  }
  std::vector<std::vector<std::pair<std::string, std::string>>> points = {{}};
  for (const auto& [key, values] : axes) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& p : points) {
      for (const auto& v : values) {
        auto q = p;
        q.push_back({key, v});
        next.push_back(q);
      }
    }
    points = next;
  }

  for (const auto& point : points) {
    YAML::Node at = YAML::Clone(root);
    for (const auto& [k, v] : point) RETURN_IF_ERROR(SetKey(at, k + "=" + v));
    RETURN_IF_ERROR(CheckKeys(at, ""));
    std::vector<double> baseline;  // the first policy's per-request latencies (seed `seed`)
    for (ClusterPolicy policy : policies) {
      ClusterRow row;
      row.policy = ClusterPolicyName(policy);
      row.point = point;
      row.runs = runs;
      for (int r = 0; r < runs; ++r) {
        ASSIGN_OR_RETURN(ClusterConfig cfg,
                         BuildConfig(at, suite, static_cast<uint64_t>(seed + r)));
        ASSIGN_OR_RETURN(ClusterResult res, RunCluster(cfg, policy));
        row.requests = res.requests;
        row.refused += res.refused;
        row.cold_starts += res.cold_starts;
        row.cold_starts_min =
            r == 0 ? res.cold_starts : std::min(row.cold_starts_min, res.cold_starts);
        row.cold_starts_max = std::max(row.cold_starts_max, res.cold_starts);
        row.prefetch_loads += res.prefetch_loads;
        row.evictions += res.evictions;
        row.makespan_s += res.makespan_s;
        row.mean_latency_s += res.mean_latency_s;
        row.p50_latency_s += res.p50_latency_s;
        row.p99_latency_s += res.p99_latency_s;
        row.chose_colocation += res.chose_colocation;
        row.chose_queue += res.chose_queue;
        row.chose_registry += res.chose_registry;
        if (r == 0) row.first_run = std::move(res);
      }
      const double n = runs;
      row.cold_starts /= n;
      row.prefetch_loads /= n;
      row.evictions /= n;
      row.makespan_s /= n;
      row.mean_latency_s /= n;
      row.p50_latency_s /= n;
      row.p99_latency_s /= n;
      if (break_even > 0) {
        std::vector<double> lat;
        for (const auto& rec : row.first_run.records) lat.push_back(rec.latency_s());
        if (baseline.empty()) {
          baseline = lat;
        } else {
          // Prefix means; the break-even is where the gap stays under the threshold.
          const size_t len = std::min(baseline.size(), lat.size());
          double sa = 0, sb = 0;
          int64_t since = -1;
          for (size_t i = 0; i < len; ++i) {
            sa += lat[i];
            sb += baseline[i];
            const double gap = std::abs(sa - sb) / static_cast<double>(i + 1);
            if (gap < break_even) {
              if (since < 0) since = static_cast<int64_t>(i) + 1;
            } else {
              since = -1;
            }
          }
          row.break_even_requests = since;
        }
      }
      out.rows.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace

StatusOr<ClusterExperiment> RunClusterExperiment(const std::string& yaml_text,
                                                 const std::string& origin,
                                                 const std::vector<std::string>& sets) {
  try {
    return RunParsed(yaml_text, origin, sets);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(origin + ": " + e.what());
  }
}

const std::vector<const KeyDecl*>& ClusterExperimentDecls() {
  static const std::vector<const KeyDecl*> keys = {&kName,
                                                   &kSuite,
                                                   &kSeed,
                                                   &kRuns,
                                                   &kBreakEven,
                                                   &kPolicies,
                                                   &kSweep,
                                                   &kMachines,
                                                   &kHardware,
                                                   &kCacheMb,
                                                   &kTargetOngoing,
                                                   &kNetworkS,
                                                   &kRegistrySpawn,
                                                   &kColdStart,
                                                   &kLoadSPerGb,
                                                   &kLoadBaseS,
                                                   &kPrefetchWindow,
                                                   &kPrefetchMinShare,
                                                   &kMaxModelsPerReplica,
                                                   &kKind,
                                                   &kProcCores,
                                                   &kPreS,
                                                   &kPostS,
                                                   &kPhases,
                                                   &kModel,
                                                   &kCount,
                                                   &kModels,
                                                   &kCopies,
                                                   &kRateQps,
                                                   &kRequests,
                                                   &kZipfS};
  return keys;
}

const std::set<std::string>& ClusterExperimentKeys() {
  static const std::set<std::string> k = [] {
    std::set<std::string> names = {"cluster", "workload"};
    for (const KeyDecl* d : ClusterExperimentDecls()) names.insert(d->name);
    return names;
  }();
  return k;
}

}  // namespace sloserve
