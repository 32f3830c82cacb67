// Policy options: each declared next to its policy (a KeyDecl: type, default, unit,
// range, help), which policies declare which options (the registry's probe), values the
// declarations refuse (naming policy, option, value and range), options of policies not
// chosen and typos (errors with a suggestion), and variant names in selection options
// (errors listing the task's variants).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "policy/policy_test_util.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/policy/common_options.h"
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

// The getters take the declaration: its default when unset, its type and range checked
// when set, the key recorded as asked (what the registry's probe learns).
TEST(PolicyParamsTest, GettersReadThroughTheDeclaration) {
  const KeyDecl number{.name = "n",
                       .type = KeyType::kNumber,
                       .default_value = "2.5",
                       .unit = "ms",
                       .min = 0,
                       .max = 10,
                       .help = "a number"};
  const KeyDecl required{.name = "r", .type = KeyType::kInteger, .min = 1, .help = "required"};
  const KeyDecl choice{.name = "c",
                       .type = KeyType::kChoice,
                       .default_value = "a",
                       .choices = {"a", "b"},
                       .help = "a choice"};
  const PolicyParams unset("dispatch policy 'x'", {});
  EXPECT_EQ(unset.GetDouble(number).value(), 2.5);
  EXPECT_EQ(unset.GetString(choice).value(), "a");
  EXPECT_EQ(unset.GetInt(required).status().message(),
            "dispatch policy 'x': option 'r' is required (required)");
  // AskedKeys: every declaration asked for, in the order asked, set or not.
  const std::vector<KeyDecl> asked = unset.AskedKeys();
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[0].name, "n");
  EXPECT_EQ(asked[1].name, "c");
  EXPECT_EQ(asked[2].name, "r");

  const PolicyParams set("dispatch policy 'x'", {{"n", "11"}, {"c", "b"}, {"r", "3"}, {"z", "1"}});
  EXPECT_EQ(set.GetDouble(number).status().message(),
            "dispatch policy 'x': option 'n': must be in [0, 10] (got 11)");
  EXPECT_EQ(set.GetString(choice).value(), "b");
  EXPECT_EQ(set.GetInt(required).value(), 3);
  EXPECT_FALSE(set.Has(KeyDecl{.name = "y"}));
  // A key no getter asked for is unknown; reading a declaration as another type is a bug.
  EXPECT_EQ(set.UnusedKeys(), std::vector<std::string>{"z"});
  EXPECT_FALSE(set.CheckAllUsed().ok());
  EXPECT_EQ(set.GetBool(number).status().code(), StatusCode::kInternal);
  EXPECT_EQ(set.GetInt(number).status().code(), StatusCode::kInternal);
  EXPECT_EQ(set.GetString(number).status().code(), StatusCode::kInternal);
}

// Every registered policy's name.
std::vector<std::string> AllPolicies() {
  return PolicyRegistry::Builtin().PolicyNames();
}

TEST(PolicyOptionsTest, DeclaredDefaultsParseAndLieInTheirOwnRange) {
  int options = 0;
  for (const std::string& policy : AllPolicies()) {
    for (const KeyDecl& key : PolicyRegistry::Builtin().OptionsOf(policy)) {
      ++options;
      const std::string what = policy + ": " + key.name;
      EXPECT_FALSE(key.help.empty()) << what;
      EXPECT_LE(key.min, key.max) << what;
      if (key.type == KeyType::kChoice) {
        EXPECT_FALSE(key.choices.empty()) << what;
      }
      if (key.default_value.empty()) {
        // No default: a text option (unset = none or computed) or a required one, which
        // says so in its help.
        EXPECT_TRUE(key.type == KeyType::kString || key.type == KeyType::kPath ||
                    key.type == KeyType::kNumberList || Has(key.help, "required"))
            << what;
        continue;
      }
      const Status st = CheckValue(key, key.default_value);
      EXPECT_TRUE(st.ok()) << what << ": " << st.message();
    }
  }
  EXPECT_GT(options, 60);  // the probe found the options
}

// An option two policies take means one thing: one type (`variant` in fixed and ribbon,
// `latency_quantile` in nexus and clockwork).
TEST(PolicyOptionsTest, SameNamedOptionsAgreeInType) {
  std::map<std::string, std::pair<KeyType, std::string>> seen;  // option -> (type, policy)
  for (const std::string& policy : AllPolicies()) {
    for (const KeyDecl& key : PolicyRegistry::Builtin().OptionsOf(policy)) {
      auto [it, fresh] = seen.emplace(key.name, std::make_pair(key.type, policy));
      if (fresh) continue;
      EXPECT_EQ(KeyTypeName(key.type), std::string(KeyTypeName(it->second.first)))
          << "option '" << key.name << "' of " << policy << " and of " << it->second.second;
    }
  }
  // AllOptions: one declaration per name, sorted, the same names as the policies take.
  const std::vector<KeyDecl> all = PolicyRegistry::Builtin().AllOptions();
  ASSERT_EQ(all.size(), seen.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(all[i - 1].name, all[i].name);
    }
    ASSERT_TRUE(seen.count(all[i].name)) << all[i].name;
    EXPECT_EQ(all[i].type, seen[all[i].name].first) << all[i].name;
    // The hull of every policy's range: each policy's default is accepted.
    for (const std::string& policy : Readers(all[i].name)) {
      for (const KeyDecl& key : PolicyRegistry::Builtin().OptionsOf(policy)) {
        if (key.name != all[i].name || key.default_value.empty()) continue;
        EXPECT_TRUE(CheckValue(all[i], key.default_value).ok())
            << all[i].name << " of " << policy << ": " << key.default_value;
      }
    }
  }
}

TEST(PolicyOptionsTest, OptionsOfACombinationAreTheUnionOfItsPolicies) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  PolicySpec spec;
  spec.selection = "ramsis";
  spec.dispatch = "slo_partition";
  spec.planning = "rate";
  const std::vector<KeyDecl> options = reg.OptionsOf(spec);
  std::vector<std::string> names;
  for (const KeyDecl& key : options) names.push_back(key.name);
  std::vector<std::string> want;
  for (const char* policy : {"slo_partition", "edf", "ramsis", "rate"}) {
    for (const KeyDecl& key : reg.OptionsOf(policy)) {
      if (std::find(want.begin(), want.end(), key.name) == want.end()) want.push_back(key.name);
    }
  }
  EXPECT_EQ(names, want);  // slo_workers once, though slo_partition and ramsis both take it
  EXPECT_EQ(std::count(names.begin(), names.end(), "slo_workers"), 1);
  EXPECT_TRUE(reg.OptionsOf("round_robin").empty());
  EXPECT_TRUE(reg.OptionsOf("no_such_policy").empty());
}

// Builds policy `name` through the registry, as MakePolicySet does, with `options`.
Status Build(const std::string& name, const std::map<std::string, std::string>& options) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  const PolicyParams p("test", options);
  const std::string kind = reg.KindOf(name);
  if (kind == "selection") return reg.MakeSelection(name, p).status();
  if (kind == "batching") {
    return reg.MakeBatching(name, p, FixedSelection::Create(PolicyParams()).value()).status();
  }
  if (kind == "dispatch") return reg.MakeDispatch(name, p).status();
  if (kind == "placement") return reg.MakePlacement(name, p).status();
  return reg.MakePlanning(name, p).status();
}

// Values outside the type or range of every declared option of every policy: refused by
// the factory, naming the policy, the option, the value and the allowed range.
TEST(PolicyOptionsTest, OutOfRangeNanInfAndWrongTypeValuesAreRefusedByName) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  int refused = 0;
  for (const std::string& policy : AllPolicies()) {
    for (const KeyDecl& key : reg.OptionsOf(policy)) {
      std::vector<std::string> bad;
      const bool numeric = key.type == KeyType::kNumber || key.type == KeyType::kInteger ||
                           key.type == KeyType::kNumberList || key.type == KeyType::kIntegerList;
      if (numeric) {
        bad = {"nan", "inf", "-inf", "abc", "1x"};
        auto text = [](double v) {
          std::ostringstream out;
          out.precision(17);
          out << v;
          return out.str();
        };
        if (std::isfinite(key.max))
          bad.push_back(text(key.max + std::max(1.0, std::fabs(key.max))));
        if (std::isfinite(key.min)) {
          bad.push_back(key.min_exclusive ? text(key.min)
                                          : text(key.min - std::max(1.0, std::fabs(key.min))));
        }
        if (key.type == KeyType::kInteger)
          bad.push_back(text(key.min_exclusive || !std::isfinite(key.min) ? 1.5 : key.min + 0.5));
      } else if (key.type == KeyType::kBool) {
        bad = {"maybe", "2"};
      } else if (key.type == KeyType::kChoice) {
        bad = {"no_such_choice"};
      }
      for (const std::string& value : bad) {
        const std::string what = policy + ": " + key.name + "=" + value;
        const Status st = Build(policy, {{key.name, value}});
        ASSERT_FALSE(st.ok()) << what;
        EXPECT_TRUE(Has(st.message(), reg.KindOf(policy) + " policy '" + policy + "'")) << what;
        EXPECT_TRUE(Has(st.message(), "option '" + key.name + "'")) << what;
        // The text as given when it is not of the key's type, the value when out of range.
        EXPECT_TRUE(Has(st.message(), "\"" + value + "\"") || Has(st.message(), "(got "))
            << what << ": " << st.message();
        EXPECT_TRUE(Has(st.message(), AllowedText(key))) << what;
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 200);
}

TEST(PolicyOptionsTest, ARefusalSaysWhatIsAllowed) {
  PolicySpec spec;
  spec.selection = "ramsis";
  spec.options = {{"window_ms", "1e300"}};
  EXPECT_EQ(MakePolicySet(spec).status().message(),
            "selection policy 'ramsis': option 'window_ms': must be in " +
                AllowedText(kWindowMsOption) + " (got 1e+300)");
  spec.options = {{"discretization", "fdl"}};
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(),
                  "option 'discretization': expected one of fld | md, got \"fdl\""));
}

TEST(PolicyOptionsTest, OptionOfAPolicyNotChosenIsAnError) {
  // `variant` is fixed's (and the Kairos dispatchers'); jellyfish_plus does not take it.
  PolicySpec spec;
  spec.selection = "jellyfish_plus";
  spec.options = {{"variant", "efficientnet_b0"}, {"window_ms", "250"}};
  auto set = MakePolicySet(spec);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "policy 'edf/round_robin': option 'variant' is not taken by the chosen policies "
            "(round_robin, edf, jellyfish_plus); did you mean 'variants'? it is an option of: " +
                JoinNames(Readers("variant")));
  // Options of placement and planning policies not configured.
  spec.options = {{"per_worker_qps", "10"}};
  EXPECT_EQ(MakePolicySet(spec).status().message(),
            "policy 'edf/round_robin': option 'per_worker_qps' is not taken by the chosen "
            "policies (round_robin, edf, jellyfish_plus); it is an option of: rate");
  spec.planning = "rate";  // now it is
  EXPECT_TRUE(MakePolicySet(spec).ok()) << MakePolicySet(spec).status().message();
  // The example: headroom with ramsis, edf, round_robin.
  spec = PolicySpec();
  spec.selection = "ramsis";
  spec.options = {{"headroom", "1.1"}};
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(),
                  "option 'headroom' is not taken by the chosen policies (round_robin, edf, "
                  "ramsis); it is an option of: " +
                      JoinNames(Readers("headroom"))));
  // Taken by the chosen policies: built.
  spec.selection = "fixed";
  spec.options = {{"variant", "efficientnet_b0"}, {"drop_expired", "true"}};
  EXPECT_TRUE(MakePolicySet(spec).ok()) << MakePolicySet(spec).status().message();
}

TEST(PolicyOptionsTest, OptionNoPolicyTakesIsAnErrorWithASuggestion) {
  PolicySpec spec;
  spec.selection = "ramsis";
  spec.options = {{"windw_ms", "250"}};
  auto set = MakePolicySet(spec);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "policy 'edf/round_robin': option 'windw_ms' is not taken by the chosen policies "
            "(round_robin, edf, ramsis); did you mean 'window_ms'?");
  // The same typo with a selection policy that has no window: the suggestion says whose.
  spec.selection = "fixed";
  EXPECT_EQ(MakePolicySet(spec).status().message(),
            "policy 'edf/round_robin': option 'windw_ms' is not taken by the chosen policies "
            "(round_robin, edf, fixed); did you mean 'window_ms'? (an option of: " +
                JoinNames(Readers("window_ms")) + ")");
  spec.options = {{"varaint", "efficientnet_b0"}};
  EXPECT_TRUE(Has(MakePolicySet(spec).status().message(),
                  "option 'varaint' is not taken by the chosen policies (round_robin, edf, "
                  "fixed); did you mean 'variant'?"));
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
                  "option 'frobnicate' is not taken by the chosen policies (round_robin, edf, "
                  "fixed); no policy takes it"));
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
