// `models:` in a config (docs/multi-model.md): expansion, defaults and errors, and the
// suite composed from the models.
#include "sloserve/config/model_config.h"

#include <gtest/gtest.h>

#include "sloserve/config/config_check.h"
#include "sloserve/config/config_schema.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/config/suite_resolver.h"

namespace sloserve {
namespace {

StatusOr<std::vector<RunSpec>> Runs(const std::string& yaml) {
  ASSIGN_OR_RETURN(ExperimentConfig cfg, ParseExperimentConfig(yaml, "m.yaml"));
  return ExpandRuns(cfg);
}

// The error of a config that parses but does not expand ("" when it expands).
std::string ExpandError(const std::string& yaml) {
  auto cfg = ParseExperimentConfig(yaml, "m.yaml");
  if (!cfg.ok()) return cfg.status().message();
  auto runs = ExpandRuns(*cfg);
  return runs.ok() ? "" : runs.status().message();
}

const char kT5[] = R"(
suite: t5-translation
workers: 8
workers_per_machine: 2
preload: none
duration_s: 10
workload: {arrival: poisson, load_qps: 4}
popularity: {zipf_s: 1}
models:
  - {name: small, task: translation, variants: t5-small, copies: 3, slo_ms: 5000}
  - {name: base, task: translation, variants: t5-base, share: 0.25, priority: 1}
  - name: own
    task: translation
    variants: t5-large
    workload: {arrival: constant, load_qps: 0.5}
    policy: {batching: fifo}
)";

TEST(ModelConfigTest, CopiesSharesAndDefaults) {
  auto runs = Runs(kT5);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 1u);
  const std::vector<ModelSpec>& m = (*runs)[0].models;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].name, "small#1");
  EXPECT_EQ(m[2].name, "small#3");
  EXPECT_EQ(m[3].name, "base");
  EXPECT_EQ(m[0].slo, Millis(5000));
  EXPECT_EQ(m[3].slo, Duration(0));  // the task's default
  EXPECT_EQ(m[3].priority, 1);
  EXPECT_DOUBLE_EQ(m[3].share, 0.25);
  // The other 0.75 by Zipf s = 1 over the three copies: 6/11, 3/11, 2/11 of it.
  EXPECT_NEAR(m[0].share, 0.75 * 6 / 11, 1e-9);
  EXPECT_NEAR(m[2].share, 0.75 * 2 / 11, 1e-9);
  EXPECT_NEAR(m[0].share + m[1].share + m[2].share + m[3].share, 1.0, 1e-9);
  EXPECT_FALSE(m[0].arrival.has_value());
  ASSERT_TRUE(m[4].arrival.has_value());
  EXPECT_EQ(m[4].arrival->kind, "constant");
  EXPECT_EQ(m[4].arrival->horizon, Seconds(10));  // the config's duration_s
  EXPECT_DOUBLE_EQ(m[4].share, 0);
  ASSERT_TRUE(m[4].policy.has_value());
  EXPECT_EQ(m[4].policy->batching, "fifo");
  EXPECT_EQ(m[4].policy->dispatch, "round_robin");  // the pool's
  EXPECT_FALSE(m[0].policy.has_value());
}

TEST(ModelConfigTest, PopularityCanBeSwept) {
  auto cfg = ParseExperimentConfig(kT5, "m.yaml");
  ASSERT_TRUE(cfg.ok());
  ASSERT_TRUE(ApplyOverrides(&*cfg, {"popularity.zipf_s=[0,2]"}).ok());
  auto runs = ExpandRuns(*cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_NEAR((*runs)[0].models[0].share, 0.25, 1e-9);            // equal: 0.75 / 3
  EXPECT_NEAR((*runs)[1].models[0].share, 0.75 * 36 / 49, 1e-9);  // 1 : 1/4 : 1/9
  EXPECT_EQ((*runs)[1].labels.at("popularity.zipf_s"), "2");
}

TEST(ModelConfigTest, WithoutModelsARunIsWhatItWas) {
  auto runs = Runs("suite: ramsis-text\nworkload: {load_qps: 10}\n");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_TRUE((*runs)[0].models.empty());
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok());
  auto plain = LoadSuite("ramsis-text");
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(suite->variants().size(), plain->variants().size());
  for (size_t v = 0; v < plain->variants().size(); ++v)
    EXPECT_EQ(suite->variants()[v].name, plain->variants()[v].name);
}

// policy.model_selection: one entry of policies: replaces named models' own selection
// (here `own`'s, none of its own before) and leaves the others as written.
TEST(ModelConfigTest, ModelSelectionReplacesAModelsSelectionPerRun) {
  const std::string yaml = std::string(kT5) +
                           "policies:\n"
                           "  - {name: as_written}\n"
                           "  - {name: replaced, model_selection: \"own=ramsis, base=fixed\"}\n";
  auto runs = Runs(yaml);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  const std::vector<ModelSpec>& written = (*runs)[0].models;
  const std::vector<ModelSpec>& replaced = (*runs)[1].models;
  ASSERT_TRUE(written[4].policy.has_value());
  EXPECT_EQ(written[4].policy->selection, "fixed");
  EXPECT_FALSE(written[3].policy.has_value());
  ASSERT_TRUE(replaced[4].policy.has_value());
  EXPECT_EQ(replaced[4].policy->selection, "ramsis");
  EXPECT_EQ(replaced[4].policy->batching, "fifo");  // the entry's own, kept
  ASSERT_TRUE(replaced[3].policy.has_value());      // named: a policy of its own now
  EXPECT_EQ(replaced[3].policy->selection, "fixed");
  EXPECT_FALSE(replaced[0].policy.has_value());
  const std::string head = std::string(kT5) + "policy: {model_selection: ";
  EXPECT_NE(ExpandError(head + "\"nope=fixed\"}\n").find("no model 'nope'"), std::string::npos);
  EXPECT_NE(ExpandError(head + "\"own=fixed,own=ramsis\"}\n").find("named twice"),
            std::string::npos);
  EXPECT_NE(ExpandError(head + "own}\n").find("policy.model_selection"), std::string::npos);
}

TEST(ModelConfigTest, ErrorsNameTheKey) {
  const std::string head =
      "suite: t5-translation\nworkers: 2\nduration_s: 5\nworkload: {load_qps: 1}\n";
  struct Case {
    std::string models;
    std::string expected;
  } cases[] = {
      {"models:\n  - {name: a, slo_msec: 5}\n",
       "unknown key 'slo_msec' in a model (did you mean 'slo_ms'?"},
      {"models:\n  - {name: a}\n  - {name: a}\n", "'models[1].name': 'a' names two models"},
      {"models:\n  - {name: a, copies: 2}\n  - {name: 'a#2'}\n", "'a#2' names two models"},
      {"models:\n  - {name: a, share: 0.5, workload: {arrival: poisson, load_qps: 1}}\n  - {name: "
       "b}\n",
       "'models[0].share': a model with a workload of its own takes no share"},
      {"models:\n  - {name: a, share: 0.7}\n  - {name: b, share: 0.6}\n",
       "shares sum to 1.3, more than"},
      {"models:\n  - {name: a, share: 0.3}\n  - {name: b, share: 0.3}\n", "they sum to 0.6, not 1"},
      {"models:\n  - {name: a, share: 1}\n  - {name: b}\n", "leaving nothing for the 1 model(s)"},
      {"models:\n  - {name: a, policy: {dispatch: jsq}}\n", "'policy.dispatch' is pool-wide"},
      {"models:\n  - {name: a, policy: {batching: edff}}\n",
       "unknown policy 'edff' (did you mean 'edf'?"},
      {"models:\n  - {name: a, priority: 3}\n", "'models[0].priority': expected a level 0..2"},
      {"models:\n  - {name: a, share: 0}\n", "'models[0].share'"},
      {"models:\n  - {task: translation}\n", "'models[0].name': a model needs a name"},
      {"task: translation\nmodels:\n  - {name: a}\n",
       "'task': a config with models: names each model's task"},
      {"models:\n  - {name: a, workload: {arrival: poisson, load_qps: 1}}\n",
       "'workload.load_qps': every model has a workload of its own"},
      {"models:\n  - {name: a, workload: {arrival: poisson}}\n", "'models[0].workload'"},
      {"models: {name: a}\n", "'models' must be a list"},
  };
  for (const Case& c : cases) {
    const std::string error = ExpandError(head + c.models);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << c.models << "\n  got: " << error << "\n  expected: " << c.expected;
  }
}

TEST(ModelConfigTest, ComposedSuiteHasATaskPerModelAndDistinctCopies) {
  auto runs = Runs(kT5);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  auto base = LoadSuite("t5-translation");
  ASSERT_TRUE(base.ok());
  ASSERT_EQ(suite->tasks().size(), 5u);
  EXPECT_EQ(suite->tasks()[1].name, "small#2");
  EXPECT_EQ(suite->tasks()[0].default_slo, Millis(5000));
  EXPECT_EQ(suite->tasks()[3].default_slo, base->tasks()[0].default_slo);
  ASSERT_EQ(suite->variants().size(), 5u);  // one variant each
  const auto v1 = suite->FindVariant("small#1/t5-small");
  const auto v2 = suite->FindVariant("small#2/t5-small");
  ASSERT_TRUE(v1 && v2);
  EXPECT_NE(*v1, *v2);
  EXPECT_EQ(suite->variants()[*v2].task, 1u);
  EXPECT_FALSE(suite->FindVariant("t5-small").has_value());
  const VariantId small = *base->FindVariant("t5-small");
  EXPECT_EQ(suite->variants()[*v2].memory_mb, base->variants()[small].memory_mb);
  EXPECT_EQ(suite->variants()[*v2].load_time, base->variants()[small].load_time);
  ASSERT_NE(suite->Latency(0, *v2, 1), nullptr);
  EXPECT_EQ(suite->Latency(0, *v2, 1)->Quantile(0.5), base->Latency(0, small, 1)->Quantile(0.5));
  EXPECT_EQ(suite->hardware().size(), base->hardware().size());
  // A model without `variants:` deploys every variant of its task.
  auto all = Runs("suite: t5-translation\nworkload: {load_qps: 1}\nmodels: [{name: t5}]\n");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  auto all_suite = ResolveRunSuite((*all)[0]);
  ASSERT_TRUE(all_suite.ok());
  EXPECT_EQ(all_suite->VariantsOfTask(0).size(), base->VariantsOfTask(0).size());
  EXPECT_TRUE(all_suite->FindVariant("t5/t5-3b").has_value());
}

TEST(ModelConfigTest, SuiteErrorsNameTheModel) {
  const std::string head = "suite: t5-translation\nworkload: {load_qps: 1}\n";
  struct Case {
    std::string models;
    std::string expected;
  } cases[] = {
      {"models: [{name: a, task: transation}]",
       "'transation' is not a task of suite t5-translation (did you mean 'translation'?"},
      {"models: [{name: a, variants: t5-smal}]",
       "models[0].variants: 't5-smal' is not a variant of task 'translation' of suite "
       "t5-translation (did you mean 't5-small'?"},
      {"models: [{name: a, variants: t5-small, slo_ms: 500}]",
       "impossible SLO 500.000 ms: the fastest variant (a/t5-small) takes 1000.000 ms"},
      {"models: [{name: 'a/b'}]", "has a '/'"},
  };
  for (const Case& c : cases) {
    auto runs = Runs(head + c.models + "\n");
    ASSERT_TRUE(runs.ok()) << runs.status().ToString();
    auto suite = ResolveRunSuite((*runs)[0]);
    ASSERT_FALSE(suite.ok()) << c.models;
    EXPECT_NE(suite.status().message().find(c.expected), std::string::npos)
        << suite.status().message() << "\n  expected: " << c.expected;
  }
}

// Three models from three suites (issue 32): an embedded image suite (the run's), the
// embedded recommendation suite, and an ORLOJ suite by a path relative to the config.
const char kThreeSuites[] = R"(
suite: ramsis-image
hardware: "n1-4cpu:2,r5n.large:2,v100:2"
workers_per_machine: 2
workload: {load_qps: 10}
models:
  - {name: rec, suite: kairos-recsys, task: rm2, slo_ms: 400}
  - {name: image, variants: resnet18, slo_ms: 300}
  - {name: dyn, suite: profiles/modes1.prof}
  - {name: image2, suite: ramsis-image, variants: resnet50}
)";

StatusOr<std::vector<RunSpec>> OrlojRuns(const std::string& yaml) {
  // Parsed as a config in experiments/orloj/, whose profiles/ holds the ORLOJ suites.
  ASSIGN_OR_RETURN(ExperimentConfig cfg,
                   ParseExperimentConfig(yaml, std::string(SLOSERVE_SOURCE_DIR) +
                                                   "/experiments/orloj/composed.yaml"));
  return ExpandRuns(cfg);
}

TEST(ModelConfigTest, ModelsFromThreeSuites) {
  auto runs = OrlojRuns(kThreeSuites);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  const RunSpec& run = (*runs)[0];
  const std::string orloj =
      std::string(SLOSERVE_SOURCE_DIR) + "/experiments/orloj/profiles/modes1.prof";
  EXPECT_EQ(run.models[0].suite, "kairos-recsys");
  EXPECT_EQ(run.models[1].suite, "");
  EXPECT_EQ(run.models[2].suite, orloj);
  // The run's suite first (a model takes it), then the others as first named; a model
  // naming the run's suite shares it.
  EXPECT_EQ(RunSuiteNames(run), (std::vector<std::string>{"ramsis-image", "kairos-recsys", orloj}));
  const std::vector<ComposedModel> composed = ComposedModelsOf(run);
  EXPECT_EQ(composed[0].suite, 1u);
  EXPECT_EQ(composed[1].suite, 0u);
  EXPECT_EQ(composed[2].suite, 2u);
  EXPECT_EQ(composed[3].suite, 0u);
  auto suite = ResolveRunSuite(run);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  std::vector<std::string> types;
  for (const HardwareSpec& h : suite->hardware()) types.push_back(h.name);
  EXPECT_EQ(types, (std::vector<std::string>{"n1-4cpu", "g4dn.xlarge", "c5n.2xlarge", "r5n.large",
                                             "t3.xlarge", "v100"}));
  EXPECT_EQ(suite->tasks()[0].default_slo, Millis(400));
  EXPECT_EQ(suite->tasks()[2].default_slo, Seconds(1));  // the ORLOJ suite's task
  const HardwareId n1 = 0, r5n = *suite->FindHardware("r5n.large"), v100 = 5;
  const VariantId rec = *suite->FindVariant("rec/rm2");
  const VariantId image = *suite->FindVariant("image/resnet18");
  const VariantId dyn = *suite->FindVariant("dyn/dyn");
  EXPECT_NE(suite->Latency(r5n, rec, 1), nullptr);
  EXPECT_EQ(suite->Latency(n1, rec, 1), nullptr);
  EXPECT_NE(suite->Latency(n1, image, 1), nullptr);
  EXPECT_EQ(suite->Latency(v100, image, 1), nullptr);
  EXPECT_NE(suite->Latency(v100, dyn, 1), nullptr);
  ASSERT_EQ(suite->exec_histograms().size(), 1u);  // modes1's one app, on dyn/dyn
  EXPECT_EQ(suite->exec_histograms()[0].variant, dyn);
  // A sweep over the same models shares the suite; another suite for a model does not.
  RunSpec other = run;
  other.models[2].suite = "t5-translation";
  EXPECT_NE(RunSuiteKey(run), RunSuiteKey(other));
}

TEST(ModelConfigTest, ASuiteOfAModelIsNamedInItsErrors) {
  struct Case {
    std::string model;
    std::string expected;
  } cases[] = {
      {"{name: a, suite: kairos-recsis}",
       "'models[1].suite': unknown suite 'kairos-recsis' (did you mean 'kairos-recsys'?"},
      {"{name: a, suite: kairos-recsys, task: rm3}",
       "models[1].task: 'rm3' is not a task of suite kairos-recsys (did you mean 'rm2'?"},
      // ramsis-text is profiled on n1-4cpu only: not on this pool.
      {"{name: a, suite: ramsis-text}",
       "'models[1]' (model a): task 'a' has no profiled variant on hardware 'r5n.large:2'"},
      {"{name: a, suite: kairos-recsys, task: ncf, slo_ms: 0.01}",
       "'models[1]' (model a): slo_ms: impossible SLO 0.010 ms"},
  };
  for (const Case& c : cases) {
    auto runs = OrlojRuns(
        "suite: kairos-recsys\nhardware: \"r5n.large:2\"\nworkload: {load_qps: 1}\n"
        "models:\n  - {name: rec, task: rm2}\n  - " +
        c.model + "\n");
    ASSERT_TRUE(runs.ok()) << runs.status().ToString();
    auto suite = ResolveRunSuite((*runs)[0]);
    ASSERT_FALSE(suite.ok()) << c.model;
    EXPECT_NE(suite.status().message().find(c.expected), std::string::npos)
        << suite.status().message() << "\n  expected: " << c.expected;
  }
}

TEST(ModelConfigTest, ConfigCheckPlacesModelErrors) {
  const auto d = CheckConfigText(
      "suite: t5-translation\nworkload: {load_qps: 1}\nmodels:\n  - name: a\n    coppies: 2\n"
      "  - {name: b, slo_ms: -1}\n",
      "c.yaml");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].line, 5);
  EXPECT_EQ(d[0].key, "models[0].coppies");
  EXPECT_NE(d[0].message.find("did you mean 'copies'?"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].line, 6);
  EXPECT_EQ(d[1].key, "models[1].slo_ms");
  EXPECT_TRUE(CheckConfigText(kT5, "ok.yaml").empty());
  // A rule across the entries points at the entry's key.
  const auto shares = CheckConfigText(
      "suite: t5-translation\nworkload: {load_qps: 1}\nmodels:\n  - {name: a, share: 0.7}\n"
      "  - {name: b, share: 0.6}\n",
      "s.yaml");
  ASSERT_EQ(shares.size(), 1u);
  EXPECT_NE(shares[0].message.find("more than the whole workload"), std::string::npos);
}

// `config check` resolves what sim and serve resolve before they run: a file the parse
// accepts but a run would refuse is an error there too.
TEST(ModelConfigTest, ConfigCheckResolvesSuiteTaskHardwarePreloadSizesAndTrace) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"suite: nosuch\n", "unknown suite 'nosuch'"},
      {"suite: ./missing.prof\n", "cannot open profile file"},
      {"suite: ramsis-image\ntask: nosuch\n", "task: 'nosuch' is not in suite"},
      {"suite: ramsis-image\nhardware: gpu9\n", "hardware: 'gpu9' is not in suite"},
      {"suite: ramsis-image\npreload: nosuch\n", "unknown variant 'nosuch'"},
      {"suite: ramsis-image\nworkload: {load_qps: 5, sizes: \"gaussian:0:0\"}\n",
       "workload.sizes: query size sampler 'gaussian:0:0'"},
      {"suite: ramsis-image\nworkload: {arrival: rps_trace, trace: /nonexistent/t.txt}\n",
       "/nonexistent/t.txt"},
  };
  for (const auto& [text, expect] : cases) {
    const auto d = CheckConfigText(text, "r.yaml");
    ASSERT_EQ(d.size(), 1u) << text;
    EXPECT_NE(d[0].message.find(expect), std::string::npos) << text << " -> " << d[0].message;
  }
  EXPECT_TRUE(CheckConfigText("suite: ramsis-image\nhardware: n1-4cpu\n", "ok.yaml").empty());
}

// models[i].repository: the model's suite is the repository task's measured profile (the
// committed models/digits), resolved against the config's folder; the errors name the key.
TEST(ModelConfigTest, ARepositoryModelTakesItsTasksMeasuredProfile) {
  const std::string root = SLOSERVE_SOURCE_DIR;
  auto runs = Runs(
      "hardware: \"local-1c:1\"\nworkload: {load_qps: 5}\nmodels:\n"
      "  - {name: digits, repository: " +
      root + "/models, variants: cnn_large}\n");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  const ModelSpec& m = (*runs)[0].models[0];
  EXPECT_EQ(m.task, "digits");  // the model's name
  EXPECT_EQ(m.repository, root + "/models");
  EXPECT_EQ(m.suite, root + "/models/digits/profile.prof");
  auto suite = ResolveRunSuite((*runs)[0]);
  ASSERT_TRUE(suite.ok()) << suite.status().ToString();
  EXPECT_TRUE(suite->FindVariant("digits/cnn_large").has_value());
  EXPECT_TRUE(suite->FindHardware("local-1c").has_value());

  auto error = [&](const std::string& entry) {
    return ExpandError("hardware: \"local-1c:1\"\nworkload: {load_qps: 5}\nmodels:\n  - {" + entry +
                       "}\n");
  };
  EXPECT_NE(
      error("name: d, repository: " + root + "/models")
          .find("'models[0].repository': " + root + "/models has no task 'd' (its directories: "),
      std::string::npos)
      << error("name: d, repository: " + root + "/models");
  EXPECT_NE(error("name: digits, repository: " + root + "/nope").find("is not a directory"),
            std::string::npos);
  EXPECT_NE(error("name: f, task: forecast, repository: " + root + "/models")
                .find("profile.prof does not exist; measure it first: sloserve profile measure "
                      "--model-repository"),
            std::string::npos);
  EXPECT_NE(error("name: digits, suite: ramsis-image, repository: " + root + "/models")
                .find("'models[0].suite': a model with a repository takes its suite from it"),
            std::string::npos);
  EXPECT_NE(
      error("name: digits, copies: 2, repository: " + root + "/models").find("copies must be 1"),
      std::string::npos);
}

TEST(ModelConfigTest, SchemaAndReferenceDeclareTheModelKeys) {
  const std::string schema = ConfigJsonSchema();
  EXPECT_NE(schema.find("\"model\""), std::string::npos);
  EXPECT_NE(schema.find("zipf_s"), std::string::npos);
  const std::string reference = ConfigReferenceMarkdown();
  for (const char* key :
       {"`models[].name`", "`models[].suite`", "`models[].repository`", "`models[].copies`",
        "`models[].share`", "`models[].workload.load_qps`", "`popularity.zipf_s`"})
    EXPECT_NE(reference.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace sloserve
