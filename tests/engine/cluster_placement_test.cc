// The thesis' model-aware placements inside the engine (docs/model-aware.md, "In the
// engine"): cold starts counted by the engine, LRU eviction through the lifecycle's
// unloads, and adaptive's choice from live estimates, with a puppet executor whose results
// the test answers at times it chooses (a fake clock).
#include <gtest/gtest.h>

#include <set>

#include "sloserve/engine/deployment.h"
#include "sloserve/engine/engine.h"
#include "sloserve/policy/placement/cluster_placement.h"
#include "sloserve/policy/policy_spec.h"
#include "support/engine_fixtures.h"
#include "support/puppet_executor.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

using testing::PuppetExecutor;
using PuppetKind = PuppetExecutor::Kind;

std::unique_ptr<Engine> MakePlacementEngine(const ProfileSuite& suite, int workers,
                                            const std::string& placement, PuppetExecutor* exec,
                                            std::map<std::string, std::string> options) {
  PolicySpec spec;
  spec.batching = "fifo";
  spec.placement = placement;
  options["max_batch"] = "1";
  spec.options = std::move(options);
  auto set = MakePolicySet(spec);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  std::vector<WorkerSpec> w = testing::Workers(workers);
  for (WorkerSpec& s : w) s.preload_none = true;
  exec->estimate = Duration(0);  // busy_until from the profile: the policy's backlog
  auto engine = Engine::Create(&suite, w, std::move(set).value(), exec, {}, 1);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  return engine.ok() ? std::move(engine).value() : nullptr;
}

Query PlacedQuery(TimePoint now, TaskId task = 0) {
  Query q = testing::At(now, Seconds(600));
  q.task = task;
  return q;
}

TimePoint AtS(double s) {
  return kTimeZero + SecondsF(s);
}

// Answers the actions sent since `from` in order: a load after `load_s`, a run after
// `run_s` (from `now`); returns the time the last answer was given.
TimePoint AnswerInOrder(Engine& e, PuppetExecutor& exec, TimePoint now, double load_s = 3,
                        double run_s = 1) {
  for (size_t i = 0; i < exec.sent.size(); ++i) {
    if (exec.sent[i].answered || exec.sent[i].kind == PuppetKind::kUnload) continue;
    now = now + SecondsF(exec.sent[i].kind == PuppetKind::kLoad ? load_s : run_s);
    exec.Answer(e, i, now);
  }
  for (size_t i : exec.Unloads()) {
    if (!exec.sent[i].answered) exec.Answer(e, i, now);
  }
  return now;
}

// Section 6.2 in the engine: 10 sequential t5-small requests on 8 cold workers. Colocation
// loads the model once and sends every later request to that worker; the engine counts one
// cold start (the thesis: 1).
TEST(ClusterPlacementEngineTest, ColocationPaysOneColdStartForSequentialRequests) {
  const ProfileSuite& suite = testing::EmbeddedSuite("t5-translation");
  PuppetExecutor exec;
  auto e = MakePlacementEngine(suite, 8, "colocation", &exec,
                               {{"warm_variant", "t5-small"}, {"variant", "t5-small"}});
  ASSERT_NE(e, nullptr);
  TimePoint now = kTimeZero;
  for (int i = 0; i < 10; ++i) {
    e->Submit(PlacedQuery(now), now);
    now = AnswerInOrder(*e, exec, now);
  }
  EXPECT_EQ(exec.Loads().size(), 1u);
  EXPECT_EQ(e->Summarize(now).cold_starts, 1);
  std::set<WorkerId> used;
  for (size_t i : exec.Runs()) used.insert(exec.sent[i].worker);
  EXPECT_EQ(used.size(), 1u);
  EXPECT_EQ(e->Summarize(now).met, 10);
  EXPECT_DOUBLE_EQ(ToSeconds(now - kTimeZero), 3 + 10 * 1.0);  // the thesis' 6.2 model
}

// Section 6.4.2's contested request: the model is warm on a busy worker. Colocation starts
// it cold on an idle worker; colocation_queue queues it at the warm one (no load).
TEST(ClusterPlacementEngineTest, ColocationStartsColdWhereWithQueueWaits) {
  const ProfileSuite& suite = testing::EmbeddedSuite("t5-translation");
  for (const std::string policy : {"colocation", "colocation_queue", "registry"}) {
    PuppetExecutor exec;
    auto e = MakePlacementEngine(suite, 4, policy, &exec, {{"warm_variant", "t5-small"}});
    ASSERT_NE(e, nullptr);
    e->Submit(PlacedQuery(AtS(0)), AtS(0));
    const TimePoint warm = AnswerInOrder(*e, exec, AtS(0));  // the warming request: 3 + 1 s
    const WorkerId w0 = exec.sent[exec.Runs().front()].worker;
    e->Submit(PlacedQuery(warm), warm);  // B1: runs warm on w0
    ASSERT_EQ(exec.Runs().size(), 2u);
    EXPECT_EQ(exec.sent[exec.Runs().back()].worker, w0) << policy;
    e->Submit(PlacedQuery(warm), warm);  // B2: w0 is busy
    if (policy == "colocation") {
      ASSERT_EQ(exec.Loads().size(), 2u) << policy;
      EXPECT_NE(exec.sent[exec.Loads().back()].worker, w0) << policy;
    } else {
      // With queuing, and the registry (w0 has 1 < 3 ongoing): B2 waits at w0.
      EXPECT_EQ(exec.Loads().size(), 1u) << policy;
      EXPECT_EQ(e->workers()[w0].queue_length, 1u) << policy;
    }
  }
}

// Three one-variant tasks ("models") of 100 MB, load 3 s, inference 1 s.
ProfileSuite ThreeModels() {
  ProfileSuite s;
  s.set_name("three");
  s.set_provenance("test");
  const HardwareId h = s.AddHardware(HardwareSpec{"hw", 1.0, 4, 1});
  for (const char* name : {"a", "b", "c"}) {
    const TaskId t = s.AddTask(TaskSpec{name, Seconds(600)});
    const VariantId v = s.AddVariant(VariantSpec{name, t, 0, 100, Seconds(3)});
    s.AddLatency(h, v, 1, LatencyDistribution(std::vector<int64_t>(3, 1'000'000)));
  }
  return s;
}

// A worker's cache of 250 MB holds two of the models: the third evicts the least recently
// used one, through an UnloadVariant, before its load. multiplexed with at most 2 models a
// replica evicts the same one whatever the memory.
TEST(ClusterPlacementEngineTest, CacheBoundEvictsTheLeastRecentlyUsedModel) {
  const ProfileSuite suite = ThreeModels();
  for (const auto& [policy, options] :
       std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {"colocation", {{"cache_mb", "250"}}},
           {"multiplexed", {{"max_models_per_replica", "2"}}}}) {
    PuppetExecutor exec;
    auto e = MakePlacementEngine(suite, 1, policy, &exec, options);
    ASSERT_NE(e, nullptr);
    TimePoint now = kTimeZero;
    for (TaskId task : {0u, 1u, 0u, 2u}) {  // a, b, a again (b is now LRU), then c
      e->Submit(PlacedQuery(now, task), now);
      now = AnswerInOrder(*e, exec, now);
    }
    ASSERT_EQ(exec.Unloads().size(), 1u) << policy;
    EXPECT_EQ(suite.variants()[exec.sent[exec.Unloads()[0]].variant].name, "b") << policy;
    // The unload went out before c's load.
    EXPECT_LT(exec.Unloads()[0], exec.Loads().back()) << policy;
    EXPECT_EQ(e->Summarize(now).cold_starts, 3) << policy;
    EXPECT_EQ(e->Summarize(now).reloads, 0) << policy;  // b was evicted, not loaded again
    EXPECT_EQ(e->Summarize(now).met, 4) << policy;
  }
}

// adaptive with the thesis' estimates (T_p = 0): while the warm worker has n queries,
// T_queue = (n + 1) T_i against T_colocation = T_cs + T_i on an idle worker. With the
// profile's 3 s load and 1 s inference it queues the 2nd-4th queries at the busy warm
// worker (2, 3, 4 s; the tie goes to queuing) and starts the 5th cold (5 > 4). After a
// load measured at 30 s the learned mean is (3 + 30) / 2 = 16.5 s, and the same burst
// all queues.
TEST(ClusterPlacementEngineTest, AdaptiveChoosesFromLiveEstimates) {
  const ProfileSuite& suite = testing::EmbeddedSuite("t5-translation");
  for (const double first_load_s : {3.0, 30.0}) {
    PuppetExecutor exec;
    auto e = MakePlacementEngine(suite, 2, "adaptive", &exec, {{"warm_variant", "t5-small"}});
    ASSERT_NE(e, nullptr);
    e->Submit(PlacedQuery(AtS(0)), AtS(0));
    const TimePoint warm = AnswerInOrder(*e, exec, AtS(0), first_load_s);
    const WorkerId w0 = exec.sent[exec.Runs().front()].worker;
    e->Submit(PlacedQuery(warm), warm);  // runs on w0 at once: w0 busy for 1 s
    for (int i = 0; i < 4; ++i) e->Submit(PlacedQuery(warm), warm);
    if (first_load_s == 3.0) {
      EXPECT_EQ(e->workers()[w0].queue_length, 3u);
      ASSERT_EQ(exec.Loads().size(), 2u);
      EXPECT_NE(exec.sent[exec.Loads().back()].worker, w0);
    } else {
      EXPECT_EQ(e->workers()[w0].queue_length, 4u);
      EXPECT_EQ(exec.Loads().size(), 1u);
    }
  }
}

// Bad options are refused naming the key; a model no worker's cache can hold is refused
// at start naming the model.
TEST(ClusterPlacementEngineTest, BadOptionsAndTooLargeModelsAreRefused) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"target_ongoing_requests", "0"},
                                                        {"network_s", "-1"},
                                                        {"cache_mb", "-5"},
                                                        {"prefetch_min_share", "0"},
                                                        {"max_models_per_replica", "0"}}) {
    auto p = ClusterPlacement::Create(ClusterPolicy::kAdaptive, PolicyParams("p", {{key, value}}));
    ASSERT_FALSE(p.ok()) << key;
    EXPECT_NE(p.status().message().find(key), std::string::npos) << p.status().message();
  }
  const ProfileSuite& suite = testing::EmbeddedSuite("t5-translation");
  auto p = ClusterPlacement::Create(
      ClusterPolicy::kColocation,
      PolicyParams("p", {{"warm_variant", "t5-large"}, {"cache_mb", "1000"}}));
  ASSERT_TRUE(p.ok());
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.workers.resize(2);
  const Status s = (*p)->Init(ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t5-large"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sloserve

namespace sloserve {
namespace {

// workers_per_machine groups consecutive workers on one machine (sharing its memory).
TEST(ClusterPlacementEngineTest, WorkersPerMachineGroupsConsecutiveWorkers) {
  const ProfileSuite& suite = testing::EmbeddedSuite("t5-translation");
  DeploymentSpec spec;
  spec.workers = 5;
  spec.workers_per_machine = 2;
  auto d = ResolveDeployment(suite, spec);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> machines;
  for (const WorkerSpec& w : d->workers) machines.push_back(w.machine);
  EXPECT_EQ(machines, (std::vector<std::string>{"m0", "m0", "m1", "m1", "m2"}));
}

// In a mix a machine holds one hardware type (the engine refuses a machine of two), so
// each type's workers are grouped apart and a type's last machine may hold fewer.
TEST(ClusterPlacementEngineTest, WorkersPerMachineNeverMixesHardwareTypes) {
  const ProfileSuite& suite = testing::EmbeddedSuite("kairos-recsys");
  DeploymentSpec spec;
  spec.task = "rm2";
  spec.hardware = "r5n.large:3,g4dn.xlarge:2,t3.xlarge:1";
  spec.workers_per_machine = 2;
  auto d = ResolveDeployment(suite, spec);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> machines;
  for (const WorkerSpec& w : d->workers) machines.push_back(w.machine);
  EXPECT_EQ(machines, (std::vector<std::string>{"m0", "m0", "m1", "m2", "m2", "m3"}));
  EXPECT_EQ(d->workers[2].hardware, *suite.FindHardware("r5n.large"));
  EXPECT_EQ(d->workers[3].hardware, *suite.FindHardware("g4dn.xlarge"));
}

}  // namespace
}  // namespace sloserve
