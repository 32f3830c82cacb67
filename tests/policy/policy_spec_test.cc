// Policy options across a policy set: which policies know which options (the registry's
// probe), options of policies not chosen (ignored), typos (errors with a suggestion), and
// variant names in selection options (errors listing the task's variants).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "policy/policy_test_util.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/policy/registry.h"
#include "sloserve/policy/selection/fixed.h"
#include "sloserve/policy/selection/jellyfish_plus.h"
#include "sloserve/policy/selection/ramsis.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

// `text` contains `part` (gmock is not linked).
::testing::AssertionResult Has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' lacks '" << part << "'";
}

std::vector<std::string> Readers(const std::string& key) {
  return PolicyRegistry::Builtin().OptionReaders(key);
}

TEST(PolicyOptionsTest, RegistryKnowsWhichPoliciesReadEachOption) {
  EXPECT_EQ(Readers("window_ms"),
            (std::vector<std::string>{"jellyfish_plus", "model_switching", "ramsis"}));
  EXPECT_EQ(Readers("drop_expired"), (std::vector<std::string>{"edf", "fifo"}));
  EXPECT_EQ(Readers("table"), std::vector<std::string>{"model_switching"});  // read, then fails
  EXPECT_EQ(Readers("slo_workers"), (std::vector<std::string>{"ramsis", "slo_partition"}));
  EXPECT_EQ(Readers("offline_scale"), std::vector<std::string>{"orloj"});  // only via Has()
  EXPECT_EQ(Readers("per_worker_qps"), std::vector<std::string>{"rate"});
  EXPECT_EQ(Readers("warm_variant"),
            (std::vector<std::string>{"adaptive", "colocation", "colocation_queue", "model_aware",
                                      "multiplexed", "prefetch", "registry"}));
  const std::vector<std::string> variant = Readers("variant");
  EXPECT_NE(std::find(variant.begin(), variant.end(), "fixed"), variant.end());
  EXPECT_EQ(std::find(variant.begin(), variant.end(), "ramsis"), variant.end());
  EXPECT_TRUE(Readers("windw_ms").empty());
  EXPECT_TRUE(Readers("").empty());
}

// Every option a policy's page documents (docs/policies/<name>.md, the `| option |`
// table) is found by the probe for that policy: a factory that reads an option only
// behind a branch would be missed, and its option would then be called unknown.
TEST(PolicyOptionsTest, ProbedOptionsCoverTheDocumentedOptions) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  std::vector<std::string> names;
  for (const auto& list : {reg.SelectionPolicies(), reg.BatchingPolicies(), reg.DispatchPolicies(),
                           reg.PlacementPolicies(), reg.PlanningPolicies()}) {
    for (const PolicyInfo& p : list) names.push_back(p.name);
  }
  int checked = 0;
  for (const std::string& name : names) {
    const std::string path = std::string(SLOSERVE_SOURCE_DIR) + "/docs/policies/" + name + ".md";
    std::ifstream in(path);
    if (!in) continue;
    bool in_table = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("| option |", 0) == 0) {
        in_table = true;
        continue;
      }
      if (!in_table) continue;
      if (line.rfind("|", 0) != 0) {
        in_table = false;
        continue;
      }
      // A row "| `option_name` | ...": the name between the first pair of backticks.
      if (line.rfind("| `", 0) != 0) continue;
      const size_t close = line.find('`', 3);
      if (close == std::string::npos) continue;
      const std::string option = line.substr(3, close - 3);
      const std::vector<std::string> readers = reg.OptionReaders(option);
      EXPECT_NE(std::find(readers.begin(), readers.end(), name), readers.end())
          << path << ": option '" << option << "' is not read by " << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);  // the tables were found
}

TEST(PolicyOptionsTest, OptionOfAPolicyNotChosenIsIgnored) {
  // The default serve config sets `variant` for `fixed`; switching the selection to a
  // policy that does not read it must not fail.
  PolicySpec spec;
  spec.selection = "jellyfish_plus";
  spec.options = {{"variant", "efficientnet_b0"}, {"window_ms", "250"}};
  auto set = MakePolicySet(spec);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->ignored_options, std::vector<std::string>{"variant"});
  spec.selection = "ramsis";  // the case (its Create does no MDP work)
  set = MakePolicySet(spec);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->ignored_options, std::vector<std::string>{"variant"});
  // Options of placement and planning policies not configured: ignored too.
  spec.options = {{"per_worker_qps", "10"}, {"warm_variant", "x"}};
  set = MakePolicySet(spec);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->ignored_options, (std::vector<std::string>{"per_worker_qps", "warm_variant"}));
  // Read by the chosen policies: nothing ignored.
  spec.selection = "fixed";
  spec.options = {{"variant", "efficientnet_b0"}, {"drop_expired", "true"}};
  set = MakePolicySet(spec);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_TRUE(set->ignored_options.empty());
}

TEST(PolicyOptionsTest, OptionNoPolicyReadsIsAnErrorWithASuggestion) {
  PolicySpec spec;
  spec.selection = "ramsis";
  spec.options = {{"windw_ms", "250"}};
  auto set = MakePolicySet(spec);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "policy 'edf/round_robin': unknown policy option 'windw_ms' (did you mean "
            "'window_ms'? read by: jellyfish_plus, model_switching, ramsis)");
  // The same typo with a selection policy that has no window: still an error.
  spec.selection = "fixed";
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(), "'windw_ms'"));
  spec.options = {{"varaint", "efficientnet_b0"}};
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(),
                  "unknown policy option 'varaint' (did you mean 'variant'? read by: "));
  // A misspelled policy kind arrives as an option.
  spec.options = {{"selction", "ramsis"}};
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(), "did you mean 'selection'?"));
  // A misspelled policy name.
  spec.options = {};
  spec.selection = "ramsi";
  EXPECT_EQ(MakePolicySet(spec).status().message(),
            "unknown selection policy 'ramsi' (did you mean 'ramsis'? known: fixed, "
            "jellyfish_plus, model_switching, ramsis)");
  spec.selection = "fixed";
  spec.options = {{"frobnicate", "1"}};
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(),
                  "unknown policy option 'frobnicate' (no policy reads it"));
}

Status InitSelection(std::unique_ptr<SelectionPolicy> p, const ProfileSuite& suite) {
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.workers = testing::MakeWorkers(2);
  return p->Init(ctx);
}

TEST(VariantOptionTest, UnknownVariantNamesThePolicyTaskSuiteAndVariants) {
  const ProfileSuite suite = testing::SmallSuite();
  auto fixed = FixedSelection::Create(PolicyParams("p", {{"variant", "slo"}}));
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(InitSelection(std::move(*fixed), suite).message(),
            "selection policy 'fixed': option 'variant': variant 'slo' is not in task 't' of "
            "suite small (did you mean 'slow'? variants: fast, slow)");
  auto jf = JellyfishPlusSelection::Create(PolicyParams("p", {{"variants", "fast,medium"}}));
  ASSERT_TRUE(jf.ok());
  EXPECT_EQ(InitSelection(std::move(*jf), suite).message(),
            "selection policy 'jellyfish_plus': option 'variants': variant 'medium' is not in "
            "task 't' of suite small (variants: fast, slow)");
  auto ramsis = RamsisSelection::Create(PolicyParams("p", {{"variants", "fats"}}));
  ASSERT_TRUE(ramsis.ok());
  EXPECT_EQ(InitSelection(std::move(*ramsis), suite).message(),
            "selection policy 'ramsis': option 'variants': variant 'fats' is not in task 't' "
            "of suite small (did you mean 'fast'? variants: fast, slow)");
  // Known names still work.
  auto ok = FixedSelection::Create(PolicyParams("p", {{"variant", "slow"}}));
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(InitSelection(std::move(*ok), suite).ok());
}

}  // namespace
}  // namespace sloserve
