// docs/serve.md's table of the embedded default's values equals the config compiled into
// the binary (apps/sloserve/default_config.h, generated from examples/serve_image.yaml):
// every key the table states has that value there, and every value set there is stated.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "default_config.h"
#include "e2e/sloserve_paths.h"

namespace sloserve {
namespace {

using testing::kRoot;

// The rows `| `key` | `value` |` of the table under "### The embedded default".
std::map<std::string, std::string> DocumentedEmbeddedDefaults() {
  std::ifstream in(kRoot + "/docs/serve.md");
  std::map<std::string, std::string> rows;
  bool in_section = false;
  auto unquote = [](std::string s) {
    while (!s.empty() && s.front() == ' ') s.erase(0, 1);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
    return s;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) in_section = line == "### The embedded default";
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    std::stringstream cells(line.substr(1));
    std::string key, value;
    std::getline(cells, key, '|');
    std::getline(cells, value, '|');
    rows[unquote(key)] = unquote(value);
  }
  return rows;
}

// The embedded config's scalars as dotted keys ("policy.name" -> "ramsis").
std::map<std::string, std::string> EmbeddedConfig() {
  std::map<std::string, std::string> out;
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& n,
                                                                        const std::string& prefix) {
    for (const auto& kv : n) {
      const std::string key = prefix + kv.first.as<std::string>();
      if (kv.second.IsMap()) {
        walk(kv.second, key + ".");
      } else {
        out[key] = kv.second.as<std::string>();
      }
    }
  };
  walk(YAML::Load(cli::kDefaultServeConfig), "");
  return out;
}

TEST(ServeDocsE2eTest, EmbeddedDefaultsTableEqualsTheEmbeddedConfig) {
  const auto documented = DocumentedEmbeddedDefaults();
  const auto embedded = EmbeddedConfig();
  ASSERT_GE(documented.size(), 10u) << "table not found in docs/serve.md";
  ASSERT_GE(embedded.size(), 10u);
  for (const auto& [key, value] : documented) {
    auto it = embedded.find(key);
    ASSERT_NE(it, embedded.end()) << "docs/serve.md states " << key << " = " << value
                                  << ", which the embedded config does not set";
    EXPECT_EQ(value, it->second) << key;
  }
  for (const auto& [key, value] : embedded) {
    EXPECT_TRUE(documented.count(key)) << "the embedded config sets " << key << " = " << value
                                       << ", which docs/serve.md's table does not state";
  }
}

// The main table's "default" column gives the embedded value beside the schema default
// where they differ (the two keys a reader of the old table got wrong).
TEST(ServeDocsE2eTest, ConfigTableNamesTheEmbeddedValuesWhereTheyDiffer) {
  std::ifstream in(kRoot + "/docs/serve.md");
  std::stringstream text;
  text << in.rdbuf();
  const auto embedded = EmbeddedConfig();
  for (const std::string key : {"workers", "executor.latency"}) {
    const std::string row = "| `" + key + "` | ";
    const size_t at = text.str().find(row);
    ASSERT_NE(at, std::string::npos) << key;
    const std::string line = text.str().substr(at, text.str().find('\n', at) - at);
    EXPECT_NE(line.find("embedded default: `" + embedded.at(key) + "`"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace sloserve
