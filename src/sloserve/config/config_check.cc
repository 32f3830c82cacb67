#include "sloserve/config/config_check.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <functional>

#include "sloserve/cluster/cluster_experiment.h"
#include "sloserve/config/config_keys.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/model_config.h"
#include "sloserve/config/suite_resolver.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/core/yaml_document.h"
#include "sloserve/engine/deployment.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/policy/registry.h"
#include "sloserve/workload/arrival_spec.h"
#include "sloserve/workload/query_size_sampler.h"

namespace sloserve {
namespace {

// The registered policies of the kind a policy.<kind> key names, or none.
const std::vector<std::string>* PolicyNamesFor(const std::string& key) {
  return key.rfind("policy.", 0) == 0 ? PolicyNamesOfKind(key.substr(7)) : nullptr;
}

// A message that starts with its place ("ORIGIN[:LINE:COLUMN]: what", as the config
// parser's errors do) as a diagnostic at that place, the place printed once.
ConfigDiagnostic FromMessage(const std::string& origin, const std::string& message) {
  ConfigDiagnostic d{origin, 0, 0, "", message};
  if (message.rfind(origin, 0) != 0) return d;
  std::string rest = message.substr(origin.size());
  int line = 0, column = 0, used = 0;
  if (std::sscanf(rest.c_str(), ":%d:%d%n", &line, &column, &used) == 2) {
    d.line = line;
    d.column = column;
    rest = rest.substr(static_cast<size_t>(used));
  }
  if (rest.rfind(": ", 0) == 0) d.message = rest.substr(2);
  return d;
}

class Checker {
 public:
  explicit Checker(const ExperimentConfig& config) : config_(config) {}

  void Add(const std::string& mark_key, const std::string& key, std::string message) {
    ConfigDiagnostic d = FromMessage(config_.origin, message);
    if (auto it = config_.marks.find(mark_key); it != config_.marks.end()) {
      d.line = it->second.line;
      d.column = it->second.column;
    }
    d.key = key;
    out_.push_back(std::move(d));
  }

  // One key and its value; `mark_key` says where it was written.
  void CheckKey(const std::string& mark_key, const std::string& key, const std::string& value) {
    const KeyDecl* decl = FindConfigKey(key);
    if (decl == nullptr) {
      Add(mark_key, key, UnknownConfigKey("unknown key", key).message());
      return;
    }
    if (value.empty()) return;  // `key:` with no value: unset
    if (const std::vector<std::string>* names = PolicyNamesFor(key)) {
      if (std::find(names->begin(), names->end(), value) == names->end())
        Add(mark_key, key,
            "unknown policy '" + value + "' (" + DidYouMean(value, *names) +
                "known: " + JoinNames(*names) + ")");
      return;
    }
    if (Status s = CheckValue(*decl, value, "value"); !s.ok()) Add(mark_key, key, s.message());
  }

  std::vector<ConfigDiagnostic> Take() { return std::move(out_); }
  bool empty() const { return out_.empty(); }

 private:
  const ExperimentConfig& config_;
  std::vector<ConfigDiagnostic> out_;
};

// The first quoted key of a message that has a mark ("'workers_per_machine': ..."), so a
// rule across keys still points at a line.
std::string QuotedKey(const ExperimentConfig& config, const std::string& message) {
  for (size_t a = message.find('\''); a != std::string::npos; a = message.find('\'', a + 1)) {
    const size_t b = message.find('\'', a + 1);
    if (b == std::string::npos) break;
    const std::string key = message.substr(a + 1, b - a - 1);
    if (config.marks.count(key)) return key;
    a = b;
  }
  return "";
}

std::vector<ConfigDiagnostic> CheckCluster(const std::string& text, const std::string& origin) {
  std::vector<ConfigDiagnostic> out;
  // As `sim` reads it: an unclosed quote or a key given twice is refused with its place.
  StatusOr<YAML::Node> loaded = LoadYamlDocument(text, origin);
  if (!loaded.ok()) return {FromMessage(origin, loaded.status().message())};
  const YAML::Node root = *loaded;
  std::vector<std::string> known(ClusterExperimentKeys().begin(), ClusterExperimentKeys().end());
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& n,
                                                                        const std::string& prefix) {
    if (!n.IsMap()) return;
    for (const auto& kv : n) {
      const std::string key = prefix + kv.first.as<std::string>();
      if (!ClusterExperimentKeys().count(key)) {
        out.push_back({origin, kv.first.Mark().line + 1, kv.first.Mark().column + 1, key,
                       "unknown key '" + key + "' (" + DidYouMean(key, known) +
                           "cluster experiment keys: docs/model-aware.md)"});
      } else if (key == "cluster" || key == "workload") {
        walk(kv.second, key + ".");
      } else if (kv.second.IsScalar()) {
        for (const KeyDecl* d : ClusterExperimentDecls()) {
          if (d->name != key) continue;
          if (Status st = CheckValue(*d, kv.second.Scalar(), "value"); !st.ok())
            out.push_back(
                {origin, kv.first.Mark().line + 1, kv.first.Mark().column + 1, key, st.message()});
        }
      }
    }
  };
  walk(root, "");
  return out;
}

// What `sim` and `serve` resolve before they run, short of initialising the policies (a
// RAMSIS policy set can take minutes): the suite and the models', the deployment (task,
// hardware, preloads), the policy names, the query sizes and, for a simulation of one
// model, its arrivals (a trace file must be there).
Status ResolveRun(const RunSpec& run, bool with_workload) {
  ASSIGN_OR_RETURN(const ProfileSuite suite, ResolveRunSuite(run));
  DeploymentSpec deployment = DeploymentSpecOf(run);
  if (!run.models.empty()) deployment.slo = Duration(0);  // each model's is its task's
  RETURN_IF_ERROR(ResolveDeployment(suite, deployment).status());
  RETURN_IF_ERROR(MakePolicySet(run.policy).status());
  RETURN_IF_ERROR(MakeQuerySizeSampler(run.sizes).status().WithPrefix("workload.sizes"));
  if (with_workload && run.models.empty()) {
    RETURN_IF_ERROR(MakeArrivalProcess(run.arrival, run.seed).status().WithPrefix("workload"));
  }
  return OkStatus();
}

}  // namespace

std::string FormatDiagnostic(const ConfigDiagnostic& d) {
  std::string out = d.file;
  if (d.line > 0) out += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
  out += ": ";
  if (!d.key.empty() && d.message.find("'" + d.key + "'") == std::string::npos) out += d.key + ": ";
  return out + d.message;
}

std::vector<ConfigDiagnostic> CheckConfigText(const std::string& text, const std::string& origin) {
  try {
    if (IsClusterExperiment(text)) return CheckCluster(text, origin);
  } catch (const YAML::Exception&) {
    // a syntax error: reported below with its place
  }
  StatusOr<ExperimentConfig> parsed = ParseExperimentStructure(text, origin);
  if (!parsed.ok()) return {FromMessage(origin, parsed.status().message())};
  const ExperimentConfig& config = *parsed;
  Checker check(config);
  for (const auto& [key, value] : config.base) {
    if (key != "__config_dir") check.CheckKey(key, key, value);
  }
  for (const auto& [key, values] : config.sweep) {
    if (!FindConfigKey(key)) {
      check.Add("sweep." + key, key, UnknownConfigKey("unknown sweep key", key).message());
      continue;
    }
    for (size_t i = 0; i < values.size(); ++i)
      check.CheckKey("sweep." + key + "[" + std::to_string(i) + "]", key, values[i]);
  }
  for (size_t i = 0; i < config.policies.size(); ++i) {
    for (const auto& [key, value] : config.policies[i])
      check.CheckKey("policies[" + std::to_string(i) + "]." + key, key, value);
  }
  for (size_t i = 0; i < config.models.size(); ++i) {
    for (const auto& [key, value] : config.models[i]) {
      const std::string mark = "models[" + std::to_string(i) + "]." + key;
      if (Status s = CheckModelEntryKey(key, value); !s.ok()) check.Add(mark, mark, s.message());
    }
  }
  if (!check.empty()) return check.Take();
  // Rules across keys, and each run's policies and their options.
  const bool serve_config =
      config.sweep.empty() && config.policies.empty() &&
      std::none_of(config.base.begin(), config.base.end(),
                   [](const auto& kv) { return kv.first.rfind("workload.", 0) == 0; });
  StatusOr<std::vector<RunSpec>> runs = ExpandRuns(config);
  if (!runs.ok() && serve_config) {
    StatusOr<RunSpec> one = RunSpecFromFlat(config.base, /*with_workload=*/false);
    if (one.ok() && !config.models.empty()) {
      StatusOr<std::vector<ModelSpec>> models = ModelsFromFlat(config.models, config.base, *one);
      if (models.ok()) {
        one->models = std::move(*models);
      } else {
        one = models.status();
      }
    }
    runs = one.ok() ? StatusOr<std::vector<RunSpec>>(std::vector<RunSpec>{*one}) : one.status();
  }
  if (!runs.ok()) {
    const std::string key = QuotedKey(config, runs.status().message());
    check.Add(key, key, runs.status().message());
    return check.Take();
  }
  for (const RunSpec& run : *runs) {
    for (const auto& [option, value] : run.policy.options) {
      if (PolicyTakesOption(run.policy, option)) continue;
      std::vector<std::string> taken;
      for (const KeyDecl& k : PolicyRegistry::Builtin().OptionsOf(run.policy))
        taken.push_back(k.name);
      const std::string key = "policy." + option;
      check.Add(key, key,
                "option '" + option + "' is not taken by policy " + run.policy.Label() + " (" +
                    DidYouMean(option, taken) + "its options: " + JoinNames(taken) + ")");
    }
    if (!check.empty()) break;  // one run's report is enough; the others repeat it
  }
  if (!check.empty()) return check.Take();
  for (const RunSpec& run : *runs) {
    if (Status s = ResolveRun(run, !serve_config); !s.ok()) {
      const std::string key = QuotedKey(config, s.message());
      check.Add(key, key, s.message());
      break;
    }
  }
  return check.Take();
}

std::vector<ConfigDiagnostic> CheckConfigFile(const std::string& path) {
  StatusOr<std::string> text = ReadConfigFile(path);
  if (!text.ok()) {
    // The diagnostic names the file itself: drop the message's "PATH: ".
    std::string message(text.status().message());
    if (message.rfind(path + ": ", 0) == 0) message.erase(0, path.size() + 2);
    return {{path, 0, 0, "", message}};
  }
  return CheckConfigText(*text, path);
}

}  // namespace sloserve
