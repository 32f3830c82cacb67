#include "sloserve/config/config_schema.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "sloserve/cluster/cluster_experiment.h"
#include "sloserve/config/config_keys.h"
#include "sloserve/config/hardware_prices.h"
#include "sloserve/config/model_config.h"
#include "sloserve/policy/registry.h"

namespace sloserve {
namespace {

using Json = nlohmann::ordered_json;

// YAML 1.1 readers (PyYAML, most editors) read on/off/yes/no as booleans.
bool IsYamlBoolWord(const std::string& s) {
  return s == "on" || s == "off" || s == "yes" || s == "no" || s == "true" || s == "false";
}

void AddBounds(const KeyDecl& k, Json* s) {
  if (std::isfinite(k.min)) (*s)[k.min_exclusive ? "exclusiveMinimum" : "minimum"] = k.min;
  if (std::isfinite(k.max)) (*s)["maximum"] = k.max;
}

Json ValueSchema(const KeyDecl& k) {
  Json s;
  s["description"] = k.help + (k.unit.empty() ? "" : " [" + k.unit + "]");
  switch (k.type) {
    case KeyType::kNumber:
    case KeyType::kInteger: {
      Json number;
      number["type"] = k.type == KeyType::kNumber ? "number" : "integer";
      AddBounds(k, &number);
      // A YAML 1.1 reader (PyYAML) reads 1e-6, having no dot, as a string.
      s["anyOf"] = Json::array(
          {number, Json{{"type", "string"},
                        {"pattern", R"(^\s*[-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+\s*$)"}}});
      break;
    }
    case KeyType::kBool:
      s["anyOf"] =
          Json::array({Json{{"type", "boolean"}},
                       Json{{"enum", Json::array({"true", "false", "yes", "no", "1", "0"})}}});
      break;
    case KeyType::kChoice: {
      Json values = Json::array();
      bool yaml_bool = false;
      for (const std::string& c : k.choices) {
        values.push_back(c);
        yaml_bool = yaml_bool || IsYamlBoolWord(c);
      }
      if (yaml_bool) {
        values.push_back(true);
        values.push_back(false);
      }
      s["enum"] = values;
      break;
    }
    case KeyType::kNumberList:
    case KeyType::kIntegerList:
      s["anyOf"] = Json::array(
          {Json{{"type", "number"}},
           Json{{"type", "string"}, {"pattern", R"(^\s*[-+0-9.eE]+(\s*,\s*[-+0-9.eE]+)*\s*$)"}}});
      break;
    case KeyType::kString:
    case KeyType::kPath:
      // A YAML 1.1 reader turns some texts into numbers ("150:1" is sexagesimal).
      s["type"] = Json::array({"string", "number"});
      break;
  }
  if (!k.default_value.empty()) s["default"] = k.default_value;
  return s;
}

Json ObjectSchema() {
  Json o;
  o["type"] = "object";
  o["properties"] = Json::object();
  o["additionalProperties"] = false;
  return o;
}

// Puts `value` at the dotted `name` inside the object schema `root`.
void Place(Json* root, const std::string& name, Json value) {
  Json* node = root;
  size_t start = 0;
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
    const std::string part = name.substr(start, dot - start);
    Json& props = (*node)["properties"];
    if (!props.contains(part)) props[part] = ObjectSchema();
    node = &props[part];
    start = dot + 1;
  }
  (*node)["properties"][name.substr(start)] = std::move(value);
}

Json PolicySchema() {
  Json p = ObjectSchema();
  p["description"] = "the policy combination and its policies' options";
  for (const KeySection& section : ConfigSections()) {
    for (const KeyDecl& k : section.keys) {
      if (k.name.rfind("policy.", 0) != 0) continue;
      const std::string option = k.name.substr(7);
      Json v = ValueSchema(k);
      if (const std::vector<std::string>* kind = PolicyNamesOfKind(option)) {
        v.erase("type");
        Json names = Json::array();
        for (const std::string& n : *kind) names.push_back(n);
        if (option == "placement" || option == "planning") names.push_back("");
        v["enum"] = names;
      }
      p["properties"][option] = std::move(v);
    }
  }
  return p;
}

// One entry of `models:` (docs/multi-model.md): its keys, and a policy of which only
// batching, selection and options differ per model.
Json ModelSchema() {
  Json m = ObjectSchema();
  m["description"] = "a model of a multi-model deployment (docs/multi-model.md)";
  for (const KeyDecl* k : ModelEntryKeys()) {
    if (k->name.rfind("policy.", 0) == 0) continue;
    Place(&m, k->name, ValueSchema(*k));
  }
  Json policy = PolicySchema();
  policy["description"] = "its batching and selection where they differ from the pool's";
  for (const char* pool_wide : {"dispatch", "placement", "planning", "name"})
    policy["properties"].erase(pool_wide);
  m["properties"]["policy"] = std::move(policy);
  m["required"] = Json::array({"name"});
  return m;
}

// Keys of a cluster experiment that hold a list or a mapping (or, for cluster.machines,
// a count or a list): their shape is checked when the experiment reads them.
bool IsStructuredClusterKey(const std::string& name) {
  return name == "policies" || name == "sweep" || name == "cluster.machines" ||
         name == "workload.phases" || name == "workload.models";
}

Json ClusterSchema() {
  Json c = ObjectSchema();
  c["description"] = "a model-aware placement experiment (docs/model-aware.md)";
  for (const KeyDecl* k : ClusterExperimentDecls()) {
    Json v = IsStructuredClusterKey(k->name) ? Json{{"description", k->help}} : ValueSchema(*k);
    if (k->name == "cluster.machines") {
      v = Json{{"description", k->help},
               {"anyOf", Json::array({ValueSchema(*k), Json{{"type", "array"}}})}};
    }
    Place(&c, k->name, std::move(v));
  }
  return c;
}

}  // namespace

std::string ConfigJsonSchema() {
  Json root = ObjectSchema();
  root["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  root["title"] = "sloserve configuration (sim experiments and serve)";
  root["description"] =
      "Generated from the declarations by `sloserve config schema`; every key: docs/config.md";
  Json defs;
  defs["policy"] = PolicySchema();
  Json sweep = ObjectSchema();
  sweep["description"] = "lists of values: one run per combination";
  for (const KeySection& section : ConfigSections()) {
    for (const KeyDecl& k : section.keys) {
      if (IsModelEntryKeyName(k.name)) continue;  // in $defs/model
      const Json value = ValueSchema(k);
      Json axis;
      axis["anyOf"] =
          Json::array({Json{{"type", "array"}, {"minItems", 1}, {"items", value}}, value});
      if (&k == FindConfigKey(HardwarePriceKey().name)) {
        // A mapping of hardware type names, whatever the suite calls them.
        sweep["patternProperties"]["^hardware_prices\\..+$"] = axis;
        Json prices = ObjectSchema();
        prices.erase("properties");
        prices["description"] = "$/h by hardware type, replacing the suite's prices";
        prices["additionalProperties"] = value;
        root["properties"]["hardware_prices"] = std::move(prices);
        continue;
      }
      sweep["properties"][k.name] = axis;
      if (k.name == "workload.load_qps") sweep["properties"]["load_qps"] = axis;
      if (k.name.rfind("policy.", 0) == 0) continue;
      Place(&root, k.name, value);
    }
  }
  root["properties"]["policy"] = Json{{"$ref", "#/$defs/policy"}};
  root["properties"]["policies"] =
      Json{{"type", "array"}, {"items", Json{{"$ref", "#/$defs/policy"}}}};
  root["properties"]["sweep"] = sweep;
  root["properties"]["models"] =
      Json{{"type", "array"}, {"minItems", 1}, {"items", Json{{"$ref", "#/$defs/model"}}}};
  defs["model"] = ModelSchema();
  defs["experiment"] = root;
  defs["cluster_experiment"] = ClusterSchema();
  Json out;
  out["$schema"] = root["$schema"];
  out["title"] = root["title"];
  out["description"] = root["description"];
  out["$defs"] = defs;
  out["$defs"]["experiment"].erase("$schema");
  out["$defs"]["experiment"].erase("title");
  out["$defs"]["experiment"].erase("description");
  // A `cluster:` section makes a model-aware placement experiment.
  out["if"] = Json{{"type", "object"}, {"required", Json::array({"cluster"})}};
  out["then"] = Json{{"$ref", "#/$defs/cluster_experiment"}};
  out["else"] = Json{{"$ref", "#/$defs/experiment"}};
  return out.dump(2) + "\n";
}

std::string ConfigReferenceMarkdown() {
  std::string out;
  auto cell = [](std::string s) {
    for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
    return s;
  };
  for (const KeySection& section : ConfigSections()) {
    out += "### " + section.title + "\n\n";
    out += "| key | type | default | unit | allowed | description |\n";
    out += "| --- | --- | --- | --- | --- | --- |\n";
    for (const KeyDecl& k : section.keys) {
      out += "| `" + k.name + "` | " + KeyTypeName(k.type) + " | " +
             (k.default_value.empty() ? "" : "`" + cell(k.default_value) + "`") + " | " +
             cell(k.unit) + " | " + cell(AllowedText(k)) + " | " + cell(k.help) + " |\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace sloserve
