// `hardware_prices:` (docs/config.md): stated $/h per hardware type, one declaration for
// every type, applied to the run's suite (and each suite a multi-model run comes from).
#include "sloserve/config/hardware_prices.h"

#include <gtest/gtest.h>

#include <fstream>

#include "sloserve/config/config_check.h"
#include "sloserve/config/config_keys.h"
#include "sloserve/config/config_schema.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/suite_resolver.h"
#include "support/temp_dir.h"

namespace sloserve {
namespace {

StatusOr<std::vector<RunSpec>> Runs(const std::string& yaml,
                                    const std::vector<std::string>& sets = {}) {
  ASSIGN_OR_RETURN(ExperimentConfig cfg, ParseExperimentConfig(yaml, "p.yaml"));
  RETURN_IF_ERROR(ApplyOverrides(&cfg, sets));
  return ExpandRuns(cfg);
}

const char kT5[] =
    "suite: t5-translation\nworkload: {load_qps: 1}\n"
    "hardware_prices: {c220g5: 1.53}\n";

TEST(HardwarePricesTest, AStatedPriceReplacesTheSuites) {
  auto runs = Runs(kT5);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ((*runs)[0].hardware_prices, (HardwarePrices{{"c220g5", 1.53}}));
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  EXPECT_DOUBLE_EQ(suite->hardware()[*suite->FindHardware("c220g5")].price_per_hour, 1.53);
  auto recorded = LoadSuite("t5-translation");
  ASSERT_TRUE(recorded.ok());
  EXPECT_DOUBLE_EQ(recorded->hardware()[0].price_per_hour, 0);  // what t5-translation has
}

TEST(HardwarePricesTest, ATypeWithDotsIsAllThatFollowsThePrefix) {
  auto runs = Runs(
      "suite: kairos-recsys\nworkload: {load_qps: 1}\n"
      "hardware_prices: {g4dn.xlarge: 0.6, r5n.large: 0}\n");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ((*runs)[0].hardware_prices, (HardwarePrices{{"g4dn.xlarge", 0.6}, {"r5n.large", 0}}));
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  EXPECT_DOUBLE_EQ(suite->hardware()[*suite->FindHardware("g4dn.xlarge")].price_per_hour, 0.6);
  EXPECT_DOUBLE_EQ(suite->hardware()[*suite->FindHardware("r5n.large")].price_per_hour, 0);
  EXPECT_DOUBLE_EQ(suite->hardware()[*suite->FindHardware("t3.xlarge")].price_per_hour, 0.1664);
}

TEST(HardwarePricesTest, BadPricesAndUnknownTypesAreRefusedNamingTheKey) {
  for (const char* price : {"-1", "abc", ".inf", ".nan", "2e6"}) {
    auto runs = Runs("suite: t5-translation\nworkload: {load_qps: 1}\nhardware_prices: {c220g5: " +
                     std::string(price) + "}\n");
    ASSERT_FALSE(runs.ok()) << price;
    EXPECT_NE(runs.status().message().find("'hardware_prices.c220g5'"), std::string::npos)
        << runs.status().message();
  }
  auto runs = Runs(
      "suite: t5-translation\nworkload: {load_qps: 1}\n"
      "hardware_prices: {c220g6: 1}\n");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_FALSE(suite.ok());
  EXPECT_NE(suite.status().message().find(
                "'hardware_prices.c220g6': 'c220g6' is not a hardware type of the run's suite "
                "t5-translation (did you mean 'c220g5'? types: c220g5)"),
            std::string::npos)
      << suite.status().message();
}

TEST(HardwarePricesTest, ConfigCheckPlacesAPriceError) {
  const auto d = CheckConfigText(
      "suite: t5-translation\nworkload: {load_qps: 1}\nhardware_prices:\n  c220g5: -2\n", "c.yaml");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 4);
  EXPECT_EQ(d[0].key, "hardware_prices.c220g5");
  EXPECT_NE(d[0].message.find("must be in [0, 1000000] (got -2)"), std::string::npos)
      << d[0].message;
  EXPECT_TRUE(CheckConfigText(kT5, "ok.yaml").empty());
  EXPECT_NE(FindConfigKey("hardware_prices.g4dn.xlarge"), nullptr);
  EXPECT_EQ(FindConfigKey("hardware_prices."), nullptr);
}

TEST(HardwarePricesTest, APriceCanBeSweptAndEachRunHasItsOwnSuite) {
  auto runs = Runs(kT5, {"hardware_prices.c220g5=[1,2]"});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_DOUBLE_EQ((*runs)[1].hardware_prices.at("c220g5"), 2);
  EXPECT_EQ((*runs)[1].labels.at("hardware_prices.c220g5"), "2");
  EXPECT_NE(RunSuiteKey((*runs)[0]), RunSuiteKey((*runs)[1]));
}

TEST(HardwarePricesTest, SchemaAndReferenceDeclareIt) {
  const std::string schema = ConfigJsonSchema();
  EXPECT_NE(schema.find("\"hardware_prices\""), std::string::npos);
  EXPECT_NE(schema.find("^hardware_prices\\\\..+$"), std::string::npos);
  EXPECT_NE(ConfigReferenceMarkdown().find("`hardware_prices.<type>` | number"), std::string::npos);
}

// Two suites that record one type differently: an error naming the model that brought
// the second suite, both suites and the field, unless the config states the price.
TEST(HardwarePricesTest, AStatedPriceSettlesTwoSuitesThatDiffer) {
  testing::ScopedTempDir dir;
  std::ofstream(dir.File("other.prof"))
      << "sloserve-profile 1\nsuite other\nprovenance test\ntask t 500000 input FP32 -1\n"
         "hardware n1-4cpu 0.5 4 15\nvariant v t 0 1 0\nlatency n1-4cpu v 1 1000\n";
  const std::string yaml =
      "suite: ramsis-image\nhardware: n1-4cpu\nworkload: {load_qps: 1}\nmodels:\n"
      "  - {name: image, variants: resnet18}\n  - {name: other, suite: other.prof}\n";
  auto cfg = ParseExperimentConfig(yaml, dir.File("c.yaml"));
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ((*runs)[0].models[1].suite, dir.File("other.prof"));  // next to the config
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_FALSE(suite.ok());
  EXPECT_NE(suite.status().message().find(
                "models[1].suite: hardware type 'n1-4cpu' has price_per_hour 0.5 in suite other "
                "but 0.19 in suite ramsis-image"),
            std::string::npos)
      << suite.status().message();
  ASSERT_TRUE(ApplyOverrides(&*cfg, {"hardware_prices.n1-4cpu=0.2"}).ok());
  runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  ASSERT_EQ(suite->hardware().size(), 1u);
  EXPECT_DOUBLE_EQ(suite->hardware()[0].price_per_hour, 0.2);
}

}  // namespace
}  // namespace sloserve
