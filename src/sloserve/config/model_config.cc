#include "sloserve/config/model_config.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "sloserve/config/config_keys.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/repository_model.h"
#include "sloserve/config/run_config.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/engine/admission.h"
#include "sloserve/policy/name_value_list.h"
#include "sloserve/policy/registry.h"
#include "sloserve/workload/popularity.h"

namespace sloserve {
namespace {

using T = KeyType;

const KeyDecl kModelName{.name = "name",
                         .help = "the served model name, unique (copies add #1..#N)"};
const KeyDecl kModelSuite{.name = "suite",
                          .help =
                              "the profile suite it comes from, named like the config's "
                              "suite: (default: the config's suite)"};
const KeyDecl kModelRepository{
    .name = "repository",
    .type = KeyType::kPath,
    .help =
        "a LibTorch model repository (as serve --model-repository takes) holding its task: its "
        "suite is the task's measured profile, and serve runs it with LibTorch (docs/torch.md)"};
const KeyDecl kModelTask{.name = "task",
                         .help =
                             "the task of its suite it deploys (default: the first; with "
                             "repository: the model's name)"};
const KeyDecl kModelVariants{.name = "variants",
                             .help =
                                 "the task's variants it deploys, v1,v2 (default: all); named "
                                 "MODEL/VARIANT in the deployment"};
const KeyDecl kModelCopies{.name = "copies",
                           .type = T::kInteger,
                           .default_value = "1",
                           .min = 1,
                           .max = 10'000,
                           .help = "deploy N distinct models NAME#1..NAME#N of this entry"};
const KeyDecl kModelSloMs{.name = "slo_ms",
                          .type = T::kNumber,
                          .default_value = "0",
                          .unit = "ms",
                          .min = 0,
                          .max = 86'400'000,
                          .help = "its latency SLO (0 = the config's slo_ms, else the task's)"};
const KeyDecl kModelShare{.name = "share",
                          .type = T::kNumber,
                          .min = 0,
                          .max = 1,
                          .min_exclusive = true,
                          .help =
                              "fraction of the config's workload it receives (default: "
                              "popularity.zipf_s or equal over the models without one)"};
const KeyDecl kModelPriority{.name = "priority",
                             .type = T::kInteger,
                             .default_value = "0",
                             .min = 0,
                             .max = kMaxPriorityLevels,
                             .help =
                                 "admission level of its queries (1 = highest, 0 = the app's "
                                 "or engine.priority_default)"};
const KeyDecl kModelBatching{.name = "policy.batching",
                             .help = "its batching policy, where it differs from the pool's"};
const KeyDecl kModelSelection{.name = "policy.selection",
                              .help = "its selection policy, where it differs from the pool's"};
const KeyDecl kZipfS{.name = "popularity.zipf_s",
                     .type = T::kNumber,
                     .default_value = "0",
                     .min = 0,
                     .max = kMaxZipfS,
                     .help =
                         "models: share of the workload of the r-th model without a share "
                         "proportional to 1/r^s (0 = equal)"};

bool IsPoolWidePolicyKey(const std::string& option) {
  return option == "dispatch" || option == "placement" || option == "planning" || option == "name";
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string Quoted(const std::string& origin, const std::string& key) {
  return "'" + origin + "." + key + "'";
}

// The run's policy with the entry's batching/selection and options: the run's options
// that the model's policies still take, then the entry's own. `selection`, when set (the
// run's policy.model_selection), replaces the entry's selection.
StatusOr<PolicySpec> ModelPolicy(const FlatConfig& entry, const PolicySpec& pool,
                                 const std::string& origin, const std::string& selection) {
  PolicySpec p = pool;
  if (auto it = entry.find("policy.batching"); it != entry.end() && !it->second.empty())
    p.batching = it->second;
  if (auto it = entry.find("policy.selection"); it != entry.end() && !it->second.empty())
    p.selection = it->second;
  if (!selection.empty()) p.selection = selection;
  std::set<std::string> taken;
  for (const KeyDecl& k : PolicyRegistry::Builtin().OptionsOf(p)) taken.insert(k.name);
  std::erase_if(p.options, [&](const auto& kv) { return !taken.count(kv.first); });
  for (const auto& [key, value] : entry) {
    if (key.rfind("policy.", 0) != 0 || key == "policy.batching" || key == "policy.selection")
      continue;
    const std::string option = key.substr(7);
    if (!taken.count(option)) {
      return InvalidArgumentError(Quoted(origin, key) + ": not an option of the model's policies " +
                                  p.batching + "/" + p.selection + " or the pool's (" + p.dispatch +
                                  (p.placement.empty() ? "" : ", " + p.placement) + ")");
    }
    p.options[option] = value;
  }
  p.name = pool.Label();
  return p;
}

}  // namespace

const std::vector<const KeyDecl*>& ModelEntryKeys() {
  static const std::vector<const KeyDecl*> keys = [] {
    std::vector<const KeyDecl*> k = {&kModelName,  &kModelSuite,    &kModelRepository,
                                     &kModelTask,  &kModelVariants, &kModelCopies,
                                     &kModelSloMs, &kModelShare,    &kModelPriority};
    for (const KeyDecl* a : ArrivalKeys()) k.push_back(a);
    k.push_back(&kModelBatching);
    k.push_back(&kModelSelection);
    return k;
  }();
  return keys;
}

const std::vector<const KeyDecl*>& ModelDeploymentKeys() {
  static const std::vector<const KeyDecl*> keys = {&kZipfS};
  return keys;
}

Status CheckModelEntryKey(const std::string& key, const std::string& value) {
  if (key.rfind("policy.", 0) == 0) {
    const std::string option = key.substr(7);
    if (IsPoolWidePolicyKey(option))
      return InvalidArgumentError("'" + key +
                                  "' is pool-wide: set it in the config's policy:, not per model");
    if (option == "batching" || option == "selection") {
      const std::vector<std::string>* names = PolicyNamesOfKind(option);
      if (value.empty() || names == nullptr ||
          std::find(names->begin(), names->end(), value) != names->end())
        return OkStatus();
      return InvalidArgumentError("unknown policy '" + value + "' (" + DidYouMean(value, *names) +
                                  "known: " + JoinNames(*names) + ")");
    }
    const KeyDecl* decl = FindConfigKey(key);
    if (decl == nullptr) return UnknownConfigKey("unknown key", key);
    return value.empty() ? OkStatus() : CheckValue(*decl, value, "value");
  }
  for (const KeyDecl* k : ModelEntryKeys()) {
    if (k->name == key) return value.empty() ? OkStatus() : CheckValue(*k, value, "value");
  }
  std::vector<std::string> names;
  for (const KeyDecl* k : ModelEntryKeys()) names.push_back(k->name);
  return InvalidArgumentError("unknown key '" + key + "' in a model (" + DidYouMean(key, names) +
                              "model keys: " + JoinNames(names) +
                              ", policy options; see docs/multi-model.md)");
}

bool HasOwnArrival(const FlatConfig& entry) {
  for (const auto& [key, value] : entry) {
    if (key.rfind("workload.", 0) == 0 && !value.empty()) return true;
  }
  return false;
}

StatusOr<std::vector<ModelSpec>> ModelsFromFlat(const std::vector<FlatConfig>& entries,
                                                const FlatConfig& base, const RunSpec& run) {
  if (entries.empty()) return std::vector<ModelSpec>{};
  if (!run.task.empty())
    return InvalidArgumentError(
        "'task': a config with models: names each model's task (models[i].task)");
  if (!run.slo_mix.empty())
    return InvalidArgumentError("'slo_mix': not with models: (give each model its slo_ms)");
  ASSIGN_OR_RETURN(double zipf_s, NumberOf(base, kZipfS));
  // policy.model_selection: model -> the selection that replaces its own in this run.
  ASSIGN_OR_RETURN(NameValueList overrides,
                   ParseNameValueList(run.policy.model_selection, "'policy.model_selection'"));
  std::map<std::string, std::string> selection_of;
  for (const auto& [model, selection] : overrides) {
    if (!selection_of.emplace(model, selection).second)
      return InvalidArgumentError("'policy.model_selection': model '" + model + "' named twice");
  }
  std::set<std::string> overridden;
  std::vector<ModelSpec> models;
  std::set<std::string> names;
  for (size_t i = 0; i < entries.size(); ++i) {
    const FlatConfig& entry = entries[i];
    const std::string origin = "models[" + std::to_string(i) + "]";
    for (const auto& [key, value] : entry)
      RETURN_IF_ERROR(CheckModelEntryKey(key, value).WithPrefix(Quoted(origin, key)));
    ModelSpec m;
    m.origin = origin;
    const std::string name = TextOf(entry, kModelName);
    if (name.empty())
      return InvalidArgumentError(Quoted(origin, "name") + ": a model needs a name");
    if (IsSet(entry, kModelSuite)) m.suite = SuiteOfConfig(TextOf(entry, kModelSuite), base);
    m.task = TextOf(entry, kModelTask);
    m.variants = SplitList(TextOf(entry, kModelVariants));
    ASSIGN_OR_RETURN(int64_t copies, IntegerOf(entry, kModelCopies));
    if (IsSet(entry, kModelRepository)) {
      // A LibTorch model: its suite is the repository's measured profile of its task.
      if (IsSet(entry, kModelSuite))
        return InvalidArgumentError(Quoted(origin, "suite") +
                                    ": a model with a repository takes its suite from it (the "
                                    "task's measured profile); remove one of them");
      if (copies > 1)
        return InvalidArgumentError(Quoted(origin, "copies") +
                                    ": a repository's task is one model (its variants are "
                                    "loaded once per worker); copies must be 1");
      m.repository = PathOfConfig(TextOf(entry, kModelRepository), base);
      if (m.task.empty()) m.task = name;
      ASSIGN_OR_RETURN(m.suite,
                       RepositoryProfilePath(m.repository, m.task, origin + ".repository"));
    }
    ASSIGN_OR_RETURN(double slo_ms, NumberOf(entry, kModelSloMs));
    m.slo = slo_ms > 0 ? SloOfMillis(slo_ms) : run.slo;
    const bool own = HasOwnArrival(entry);
    if (own) {
      FlatConfig arrival;
      for (const auto& [key, value] : entry) {
        if (key.rfind("workload.", 0) == 0) arrival[key] = value;
      }
      for (const char* inherited : {"duration_s", "__config_dir"}) {
        if (auto it = base.find(inherited); it != base.end()) arrival[inherited] = it->second;
      }
      ASSIGN_OR_RETURN(ArrivalSpec a, ArrivalSpecFromFlat(arrival));
      RETURN_IF_ERROR(ValidateArrivalSpec(a).WithPrefix(Quoted(origin, "workload")));
      m.arrival = a;
    }
    if (IsSet(entry, kModelShare)) {
      if (own)
        return InvalidArgumentError(Quoted(origin, "share") +
                                    ": a model with a workload of its own takes no share of the "
                                    "config's (give one or the other)");
      ASSIGN_OR_RETURN(m.share, NumberOf(entry, kModelShare));
    }
    ASSIGN_OR_RETURN(int64_t priority, IntegerOf(entry, kModelPriority));
    if (priority > run.priority_levels)
      return InvalidArgumentError(Quoted(origin, "priority") + ": expected a level 0.." +
                                  std::to_string(run.priority_levels) +
                                  " (engine.priority_levels), got " + std::to_string(priority));
    m.priority = static_cast<int32_t>(priority);
    bool has_policy = false;
    for (const auto& [key, value] : entry) has_policy = has_policy || key.rfind("policy.", 0) == 0;
    std::string selection;
    if (auto it = selection_of.find(name); it != selection_of.end()) {
      selection = it->second;
      overridden.insert(name);
      has_policy = true;
    }
    if (has_policy) {
      ASSIGN_OR_RETURN(PolicySpec p, ModelPolicy(entry, run.policy, origin, selection));
      m.policy = std::move(p);
    }
    for (int64_t k = 1; k <= copies; ++k) {
      ModelSpec c = m;
      c.name = copies == 1 ? name : name + "#" + std::to_string(k);
      if (copies > 1) c.origin = origin + " (copy " + std::to_string(k) + ")";
      if (!names.insert(c.name).second)
        return InvalidArgumentError(Quoted(origin, "name") + ": '" + c.name +
                                    "' names two models (names must be unique)");
      models.push_back(std::move(c));
    }
  }
  for (const auto& [model, selection] : selection_of) {
    if (!overridden.count(model))
      return InvalidArgumentError("'policy.model_selection': no model '" + model + "' in models:");
  }
  // Shares of the run's workload: given ones, the rest spread by Zipf (or equally).
  double given = 0;
  std::vector<size_t> rest;
  bool any_shared = false;
  for (size_t i = 0; i < models.size(); ++i) {
    if (models[i].arrival) continue;
    any_shared = true;
    if (models[i].share > 0) {
      given += models[i].share;
    } else {
      rest.push_back(i);
    }
  }
  auto sum_text = [&] {
    std::ostringstream s;
    s << given;
    return s.str();
  };
  constexpr double kSlack = 1e-6;
  if (given > 1 + kSlack)
    return InvalidArgumentError("'models': the models' shares sum to " + sum_text() +
                                ", more than the whole workload (1)");
  if (any_shared && rest.empty() && std::abs(given - 1) > kSlack)
    return InvalidArgumentError("'models': every model gives its share and they sum to " +
                                sum_text() + ", not 1 (the whole workload)");
  if (!rest.empty() && given > 1 - kSlack)
    return InvalidArgumentError("'models': the given shares sum to 1, leaving nothing for the " +
                                std::to_string(rest.size()) + " model(s) without a share");
  if (IsSet(base, kZipfS) && rest.empty())
    return InvalidArgumentError(
        "'popularity.zipf_s': no model takes an unspecified share of the workload to spread it "
        "over");
  if (!rest.empty()) {
    const std::vector<double> shares = ZipfShares(rest.size(), zipf_s, 1 - given);
    for (size_t k = 0; k < rest.size(); ++k) models[rest[k]].share = shares[k];
  }
  if (!any_shared) {
    for (const KeyDecl* k : ArrivalKeys()) {
      if (IsSet(base, *k))
        return InvalidArgumentError("'" + k->name +
                                    "': every model has a workload of its own, so the "
                                    "config's is unused");
    }
  }
  return models;
}

}  // namespace sloserve
