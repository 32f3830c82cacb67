#include "sloserve/config/experiment_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sloserve/config/config_keys.h"
#include "sloserve/config/model_config.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/core/read_file.h"
#include "sloserve/core/yaml_document.h"
#include "sloserve/policy/registry.h"

namespace sloserve {
namespace {

bool KnownKey(const std::string& key) {
  return FindConfigKey(key) != nullptr;
}

SourceMark MarkOf(const YAML::Node& n) {
  return {n.Mark().line + 1, n.Mark().column + 1};
}

std::string Where(const std::string& origin, const YAML::Node& n) {
  const SourceMark m = MarkOf(n);
  return origin + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
}

// Flattens a mapping into dotted keys, recording where each was written under
// `mark_prefix` + key.
Status Flatten(const YAML::Node& node, const std::string& prefix, const std::string& origin,
               const std::string& mark_prefix, FlatConfig* out,
               std::map<std::string, SourceMark>* marks) {
  if (!node.IsMap()) {
    return InvalidArgumentError(Where(origin, node) + ": '" + prefix + "' must be a mapping");
  }
  for (const auto& kv : node) {
    std::string key =
        prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>();
    // The top level's lists are read apart (a Clone without them would lose the marks).
    if (prefix.empty() && mark_prefix.empty() &&
        (key == "sweep" || key == "policies" || key == "models"))
      continue;
    // YAML forbids a key twice in one mapping; the parser keeps both and the last would
    // silently win (`workers: 4` ... `workers: 8`).
    if (const auto seen = marks->find(mark_prefix + key); seen != marks->end()) {
      return InvalidArgumentError(Where(origin, kv.first) + ": key '" + key +
                                  "' given twice (first at line " +
                                  std::to_string(seen->second.line) + ")");
    }
    (*marks)[mark_prefix + key] = MarkOf(kv.first);
    if (kv.second.IsMap()) {
      RETURN_IF_ERROR(Flatten(kv.second, key, origin, mark_prefix, out, marks));
    } else if (kv.second.IsScalar()) {
      (*out)[key] = kv.second.Scalar();
    } else if (kv.second.IsNull()) {
      (*out)[key] = "";
    } else {
      return InvalidArgumentError(Where(origin, kv.second) + ": key '" + key +
                                  "' must be a single value (lists go under 'sweep:')");
    }
  }
  return OkStatus();
}

std::string SweepKey(std::string key) {
  return key == "load_qps" ? "workload.load_qps" : key;
}

bool IsPolicyNameKey(const std::string& key) {
  for (const KeyDecl* k : PolicyNameKeys()) {
    if (k->name == key) return true;
  }
  return false;
}

}  // namespace

Status UnknownConfigKey(const std::string& what, const std::string& key) {
  const std::vector<std::string>& names = ConfigKeyNames();
  std::vector<std::string> section;
  const size_t dot = key.find('.');
  const std::string prefix = dot == std::string::npos ? "" : key.substr(0, dot + 1);
  for (const std::string& k : names) {
    if (!prefix.empty() && k.rfind(prefix, 0) == 0) section.push_back(k);
  }
  std::string listed;
  if (prefix == "policy.") {
    listed =
        "policy keys: the policy names (dispatch, batching, selection, placement, "
        "planning, name) and the options `sloserve policies --describe NAME` lists";
  } else if (!section.empty()) {
    listed = "keys under '" + prefix + "': " + JoinNames(section);
  } else {
    std::vector<std::string> top;
    for (const std::string& k : names) {
      const std::string head = k.substr(0, k.find('.'));
      if (std::find(top.begin(), top.end(), head) == top.end()) top.push_back(head);
    }
    listed = "top-level keys and sections: " + JoinNames(top);
  }
  return InvalidArgumentError(what + " '" + key + "' (" + DidYouMean(key, names) + listed +
                              "; see docs/config.md)");
}

std::string WhereIs(const ExperimentConfig& config, const std::string& mark_key) {
  auto it = config.marks.find(mark_key);
  if (it == config.marks.end() || it->second.line == 0) return config.origin;
  return config.origin + ":" + std::to_string(it->second.line) + ":" +
         std::to_string(it->second.column);
}

bool PolicyTakesOption(const PolicySpec& policy, const std::string& option) {
  for (const KeyDecl& k : PolicyRegistry::Builtin().OptionsOf(policy)) {
    if (k.name == option) return true;
  }
  return false;
}

StatusOr<ExperimentConfig> ParseExperimentStructure(const std::string& text,
                                                    const std::string& origin) {
  auto syntax_error = [&](const YAML::Exception& e) {
    return InvalidArgumentError(origin + ":" + std::to_string(e.mark.line + 1) + ":" +
                                std::to_string(e.mark.column + 1) + ": " + e.msg);
  };
  ASSIGN_OR_RETURN(const YAML::Node root, LoadYamlDocument(text, origin));
  ExperimentConfig cfg;
  cfg.origin = origin;
  if (root.IsNull()) return cfg;
  if (!root.IsMap()) return InvalidArgumentError(origin + ": top level must be a mapping");
  try {
    if (root["sweep"]) {
      const YAML::Node& sweep = root["sweep"];
      if (!sweep.IsMap())
        return InvalidArgumentError(Where(origin, sweep) + ": 'sweep' must map keys to lists");
      for (const auto& kv : sweep) {
        const std::string key = SweepKey(kv.first.as<std::string>());
        if (cfg.marks.count("sweep." + key) != 0) {
          return InvalidArgumentError(Where(origin, kv.first) + ": sweep key '" + key +
                                      "' given twice");
        }
        cfg.marks["sweep." + key] = MarkOf(kv.first);
        std::vector<std::string> values;
        if (kv.second.IsSequence()) {
          for (const auto& v : kv.second) {
            if (!v.IsScalar())
              return InvalidArgumentError(Where(origin, v) + ": sweep values must be scalars");
            cfg.marks["sweep." + key + "[" + std::to_string(values.size()) + "]"] = MarkOf(v);
            values.push_back(v.Scalar());
          }
        } else if (kv.second.IsScalar()) {
          cfg.marks["sweep." + key + "[0]"] = MarkOf(kv.second);
          values.push_back(kv.second.Scalar());
        }
        if (values.empty())
          return InvalidArgumentError(Where(origin, kv.second) + ": sweep '" + key + "' is empty");
        cfg.sweep.emplace_back(key, values);
      }
    }
    if (root["policies"]) {
      const YAML::Node& list = root["policies"];
      if (!list.IsSequence())
        return InvalidArgumentError(Where(origin, list) + ": 'policies' must be a list");
      for (const auto& item : list) {
        FlatConfig p;
        const std::string mark_prefix = "policies[" + std::to_string(cfg.policies.size()) + "].";
        RETURN_IF_ERROR(Flatten(item, "policy", origin, mark_prefix, &p, &cfg.marks));
        cfg.policies.push_back(std::move(p));
      }
    }
    if (root["models"]) {
      const YAML::Node& list = root["models"];
      cfg.marks["models"] = MarkOf(list);
      if (!list.IsSequence())
        return InvalidArgumentError(Where(origin, list) +
                                    ": 'models' must be a list of models (docs/multi-model.md)");
      for (const auto& item : list) {
        FlatConfig m;
        const std::string mark_prefix = "models[" + std::to_string(cfg.models.size()) + "].";
        cfg.marks["models[" + std::to_string(cfg.models.size()) + "]"] = MarkOf(item);
        RETURN_IF_ERROR(Flatten(item, "", origin, mark_prefix, &m, &cfg.marks));
        cfg.models.push_back(std::move(m));
      }
      if (cfg.models.empty())
        return InvalidArgumentError(Where(origin, list) + ": 'models' is an empty list");
    }
    RETURN_IF_ERROR(Flatten(root, "", origin, "", &cfg.base, &cfg.marks));
  } catch (const YAML::Exception& e) {
    return syntax_error(e);
  }
  auto name = cfg.base.find("name");
  cfg.name = name == cfg.base.end() ? "" : name->second;
  cfg.base["__config_dir"] = std::filesystem::path(origin).parent_path().string();
  return cfg;
}

StatusOr<ExperimentConfig> ParseExperimentConfig(const std::string& text,
                                                 const std::string& origin) {
  ASSIGN_OR_RETURN(ExperimentConfig cfg, ParseExperimentStructure(text, origin));
  for (const auto& [key, values] : cfg.sweep) {
    if (!KnownKey(key))
      return UnknownConfigKey(WhereIs(cfg, "sweep." + key) + ": unknown sweep key", key);
  }
  for (size_t i = 0; i < cfg.policies.size(); ++i) {
    for (const auto& [key, value] : cfg.policies[i]) {
      if (!KnownKey(key))
        return UnknownConfigKey(
            WhereIs(cfg, "policies[" + std::to_string(i) + "]." + key) + ": unknown key", key);
    }
  }
  for (size_t i = 0; i < cfg.models.size(); ++i) {
    for (const auto& [key, value] : cfg.models[i]) {
      const std::string mark = "models[" + std::to_string(i) + "]." + key;
      if (Status s = CheckModelEntryKey(key, value); !s.ok())
        return s.WithPrefix(WhereIs(cfg, mark) + ": '" + mark + "'");
    }
  }
  for (const auto& [key, value] : cfg.base) {
    if (key != "__config_dir" && !KnownKey(key))
      return UnknownConfigKey(WhereIs(cfg, key) + ": unknown key", key);
  }
  return cfg;
}

StatusOr<std::string> ReadConfigFile(const std::string& path) {
  return ReadFileBounded(path, "config file", kMaxConfigFileBytes);
}

StatusOr<ExperimentConfig> LoadExperimentConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path));
  return ParseExperimentConfig(text, path);
}

Status ApplyOverrides(ExperimentConfig* config, const std::vector<std::string>& sets) {
  for (const std::string& s : sets) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--set '" + s + "': expected key=value");
    }
    const std::string key = SweepKey(s.substr(0, eq));
    const std::string value = s.substr(eq + 1);
    if (!KnownKey(key)) return UnknownConfigKey("--set: unknown key", key);
    // An override replaces any sweep over the same key.
    std::erase_if(config->sweep, [&](const auto& axis) { return axis.first == key; });
    config->marks.erase(key);
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
      std::vector<std::string> values;
      const std::string inner = value.substr(1, value.size() - 2);
      if (inner.find_first_not_of(' ') == std::string::npos) {
        return InvalidArgumentError("--set " + key + ": empty list");
      }
      // Every item between commas, a trailing one's included: "[4,]" is a typo, not [4].
      for (size_t at = 0;;) {
        const size_t comma = inner.find(',', at);
        std::string item = inner.substr(at, comma == std::string::npos ? comma : comma - at);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (item.empty()) {
          return InvalidArgumentError("--set " + key + "=" + value +
                                      ": an empty item in the list (a stray comma?)");
        }
        values.push_back(item);
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
      config->sweep.emplace_back(key, values);
    } else if (value.empty()) {
      // "key=" removes the key (e.g. a policy option the new policy does not take).
      config->base.erase(key);
      for (FlatConfig& p : config->policies) p.erase(key);
    } else {
      config->base[key] = value;
      // A policy name replaces every entry's; an option reaches the entries through the
      // base (ExpandRuns), overriding an entry that sets it itself.
      if (key.rfind("policy.", 0) == 0) {
        for (FlatConfig& p : config->policies) {
          if (IsPolicyNameKey(key) || p.count(key)) p[key] = value;
        }
      }
    }
  }
  return OkStatus();
}

StatusOr<std::vector<RunSpec>> ExpandRuns(const ExperimentConfig& config) {
  std::vector<FlatConfig> policies = config.policies;
  if (policies.empty()) policies.push_back({});
  std::vector<RunSpec> runs;
  std::set<std::string> taken;  // policy options some entry of the list takes
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
      if (!pol.empty()) {
        // A `policies:` entry replaces the base policy's names; the base's options (and
        // swept ones) are defaults for the entries: each entry takes those its policies
        // declare.
        FlatConfig defaults;
        for (const auto& [k, v] : flat) {
          if (k.rfind("policy.", 0) == 0 && !IsPolicyNameKey(k)) defaults[k] = v;
        }
        std::erase_if(flat, [](const auto& kv) { return kv.first.rfind("policy.", 0) == 0; });
        for (const auto& [k, v] : pol) flat[k] = v;
        // A swept policy name (policy.batching: [edf, fifo]) replaces every entry's, as a
        // scalar --set does (ApplyOverrides): dropped here, the rows recorded values no run
        // used.
        for (const auto& [k, v] : labels) {
          if (IsPolicyNameKey(k)) flat[k] = v;
        }
        const PolicySpec names = PolicyNamesFromFlat(flat);
        for (const auto& [k, v] : defaults) {
          const bool swept = labels.count(k) > 0;
          if ((swept || !pol.count(k)) && PolicyTakesOption(names, k.substr(7))) {
            flat[k] = v;
            taken.insert(k);
          }
        }
        for (const auto& [k, v] : pol) taken.insert(k);
      }
      // A multi-model config whose every model has its own workload has none of its own.
      const bool own_workloads = !config.models.empty() &&
                                 std::all_of(config.models.begin(), config.models.end(),
                                             [](const FlatConfig& m) { return HasOwnArrival(m); });
      auto spec = RunSpecFromFlat(flat, /*with_workload=*/!own_workloads);
      if (spec.ok() && !config.models.empty()) {
        auto models = ModelsFromFlat(config.models, flat, *spec);
        if (models.ok()) {
          spec->models = std::move(*models);
        } else {
          spec = models.status();
        }
      }
      if (!spec.ok()) {
        std::string where;
        for (const auto& [k, v] : labels) where += (where.empty() ? "" : ", ") + k + "=" + v;
        return spec.status().WithPrefix(where.empty() ? "config" : "config (" + where + ")");
      }
      spec->labels = labels;
      runs.push_back(std::move(*spec));
    }
    // Two entries with one label (their name, else batching/dispatch) would print rows
    // no reader can tell apart.
    const size_t first = runs.size() - policies.size();
    for (size_t j = 1; j < policies.size(); ++j) {
      const std::string label = runs[first + j].policy.Label();
      for (size_t i = 0; i < j; ++i) {
        if (runs[first + i].policy.Label() != label) continue;
        const std::string entry = "policies[" + std::to_string(j) + "]";
        if (!runs[first + j].policy.name.empty()) {
          return InvalidArgumentError(WhereIs(config, entry + ".policy.name") + ": '" + entry +
                                      ".policy.name': '" + label + "' repeats policies[" +
                                      std::to_string(i) +
                                      "]'s name; each entry needs its own (rows are told apart "
                                      "by it)");
        }
        return InvalidArgumentError(
            WhereIs(config, entry + ".policy.batching") + ": '" + entry + "': label '" + label +
            "' (batching/dispatch, no name) repeats policies[" + std::to_string(i) +
            "]'s; give the entries distinct names (rows are told apart "
            "by them)");
      }
    }
    size_t i = 0;
    for (; i < idx.size(); ++i) {
      if (++idx[i] < config.sweep[i].second.size()) break;
      idx[i] = 0;
    }
    if (i == idx.size()) break;
  }
  if (!config.policies.empty()) {
    // An option no entry takes would otherwise vanish: as much a typo as an unknown key.
    for (const auto& [k, v] : config.base) {
      if (k.rfind("policy.", 0) == 0 && !IsPolicyNameKey(k) && !taken.count(k))
        return InvalidArgumentError(WhereIs(config, k) + ": '" + k +
                                    "' is not an option of any policy in 'policies:' (see "
                                    "sloserve policies --describe NAME)");
    }
    for (const auto& [k, values] : config.sweep) {
      if (k.rfind("policy.", 0) == 0 && !IsPolicyNameKey(k) && !taken.count(k))
        return InvalidArgumentError(WhereIs(config, "sweep." + k) + ": sweep '" + k +
                                    "' is not an option of any policy in 'policies:'");
    }
  }
  return runs;
}

}  // namespace sloserve
