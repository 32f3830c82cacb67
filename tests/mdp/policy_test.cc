// Policies: lookup, expectations vs a Monte-Carlo run of the worker under the policy,
// monotonicity in load, Pareto pruning and bad input (impossible SLO, overload, gaps).
#include "sloserve/mdp/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>

#include "mdp/mdp_test_util.h"
#include "sloserve/mdp/model.h"

namespace sloserve::mdp {
namespace {

using testing::SmallOptions;

TEST(Policy, DecideIsATableLookup) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  auto p = GeneratePolicy(suite, SmallOptions(200, 2));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const PolicyData& d = p->data();
  EXPECT_EQ(p->Decide(0, Millis(10)).variant, kNoId);
  EXPECT_EQ(p->Decide(9, Millis(50)), d.full_action);
  EXPECT_EQ(p->Decide(3, Millis(-5)), d.table[2 * d.levels_us.size() + 0]);
  for (int64_t us = -100; us <= 70000; us += 137) {
    const auto& lv = d.levels_us;
    int want = static_cast<int>(std::upper_bound(lv.begin(), lv.end(), us) - lv.begin()) - 1;
    EXPECT_EQ(p->LevelOf(Duration(us)), std::max(want, 0)) << us;
  }
  // A fresh query (slack = SLO) alone: the most accurate variant that fits.
  const Action a = p->Decide(1, Millis(60));
  EXPECT_EQ(p->VariantName(a.variant), "slow");
  EXPECT_EQ(a.batch, 1);
  // No slack at all: late rather than never, fastest variant, whole queue.
  const Action late = p->Decide(4, Millis(1));
  EXPECT_EQ(p->VariantName(late.variant), "fast");
  EXPECT_EQ(late.batch, 4);
}

struct McResult {
  double accuracy = 0, violation = 0;
};

// One worker of K fed every K-th Poisson arrival, latencies constant (SmallSuite).
McResult SimulatePolicy(const ProfileSuite& suite, const MdpOptions& o, const Policy& p,
                        int queries, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(o.load_qps * 1e-6);
  auto next_worker_arrival = [&](double t) {
    for (int i = 0; i < o.workers; ++i) t += gap(rng);
    return t;
  };
  const double slo = static_cast<double>(o.slo.count());
  std::deque<double> q;
  double now = 0, next = next_worker_arrival(0);
  long served = 0, met = 0;
  double acc = 0;
  while (served < queries) {
    while (next <= now) {
      q.push_back(next);
      next = next_worker_arrival(next);
    }
    if (q.empty()) {
      now = next;
      continue;
    }
    while (static_cast<int>(q.size()) > o.max_queue) q.pop_front();  // the model truncates
    const Action a = p.Decide(static_cast<int>(q.size()),
                              Duration(static_cast<int64_t>(std::floor(q.front() + slo - now))));
    const double lat = static_cast<double>(
        suite.Latency(0, a.variant, a.batch)->Quantile(o.latency_quantile).count());
    const double finish = now + lat;
    for (int i = 0; i < a.batch; ++i) {
      ++served;
      if (finish <= q.front() + slo) {
        ++met;
        acc += suite.variants()[a.variant].accuracy;
      }
      q.pop_front();
    }
    now = finish;
  }
  return {met ? acc / met : 0, 1.0 - static_cast<double>(met) / served};
}

TEST(Policy, ExpectationsMatchMonteCarlo) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  for (double load : {100.0, 300.0, 500.0}) {
    MdpOptions o = SmallOptions(load, 3);
    o.discretization = {DiscretizationKind::kFixedLength, 60};
    auto p = GeneratePolicy(suite, o);
    ASSERT_TRUE(p.ok());
    const McResult mc = SimulatePolicy(suite, o, *p, 300000, 11);
    SCOPED_TRACE("load " + std::to_string(load));
    std::printf("load %.0f: expected acc %.3f viol %.4f | simulated acc %.3f viol %.4f\n", load,
                p->expected_accuracy(), p->expected_violation(), mc.accuracy, mc.violation);
    EXPECT_NEAR(mc.accuracy, p->expected_accuracy(), 1.0);
    EXPECT_LE(mc.violation, p->expected_violation() + 0.01);
  }
}

TEST(Policy, EvaluatePolicyReproducesStoredExpectations) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  MdpOptions o = SmallOptions(300, 2);
  auto p = GeneratePolicy(suite, o);
  ASSERT_TRUE(p.ok());
  auto ev = EvaluatePolicy(suite, o, *p);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_NEAR(ev->expected_accuracy, p->expected_accuracy(), 1e-9);
  EXPECT_NEAR(ev->expected_violation, p->expected_violation(), 1e-9);
  MdpOptions other = o;
  other.max_queue = 6;
  EXPECT_FALSE(EvaluatePolicy(suite, other, *p).ok());
}

TEST(Policy, MoreLoadNeverRaisesExpectedAccuracy) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  for (BatchingKind b : {BatchingKind::kMaximal, BatchingKind::kVariable}) {
    double prev = 1e9;
    for (double load = 20; load <= 1200; load += 70) {
      MdpOptions o = SmallOptions(load, 2);
      o.batching = b;
      auto p = GeneratePolicy(suite, o);
      ASSERT_TRUE(p.ok());
      EXPECT_LE(p->data().accuracy_per_query, prev + 1e-4) << BatchingName(b) << " " << load;
      prev = p->data().accuracy_per_query;
    }
  }
}

ProfileSuite SuiteWithDominatedVariant() {
  ProfileSuite s = sloserve::testing::SmallSuite();
  VariantSpec bad{"bad", 0, 65.0, 0, Duration(0)};
  const VariantId v = s.AddVariant(bad);
  for (int b = 1; b <= 8; ++b) {
    s.AddLatency(0, v, b, LatencyDistribution(std::vector<int64_t>(5, 20000 + 3000 * (b - 1))));
  }
  return s;
}

TEST(Policy, ParetoPruningDropsDominatedVariants) {
  const ProfileSuite suite = SuiteWithDominatedVariant();
  MdpOptions o = SmallOptions();
  auto m = MdpModel::Build(suite, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->VariantNames(), (std::vector<std::string>{"fast", "slow"}));
  EXPECT_NE(m->notes().find("pruned bad: dominated by fast"), std::string::npos);
  o.pareto_prune = false;
  m = MdpModel::Build(suite, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->VariantNames(), (std::vector<std::string>{"fast", "bad", "slow"}));
}

TEST(Policy, ParetoPruningComparesEveryBatchSize) {
  // "batcher" is slower than "fast" at batch 1 (11 vs 10 ms) and less accurate, but
  // faster from batch 2 on: pruning by batch-1 latency alone would drop it although its
  // actions are the fastest near capacity (ramsis-image's shufflenet_v2_x1_5).
  ProfileSuite suite = sloserve::testing::SmallSuite();
  const VariantId v = suite.AddVariant(VariantSpec{"batcher", 0, 65.0, 0, Duration(0)});
  for (int b = 1; b <= 8; ++b) {
    suite.AddLatency(0, v, b, LatencyDistribution(std::vector<int64_t>(5, 10000 + 1000 * b)));
  }
  auto m = MdpModel::Build(suite, SmallOptions());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->VariantNames(), (std::vector<std::string>{"fast", "batcher", "slow"}));
  EXPECT_EQ(m->notes().find("pruned batcher"), std::string::npos) << m->notes();
  // Near the worker's capacity (fast: 8 rows / 24 ms = 333 qps) the MDP serves with it.
  auto p = GeneratePolicy(suite, SmallOptions(600, 2));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  bool used = false;
  for (const Action& a : p->data().table) used = used || p->VariantName(a.variant) == "batcher";
  EXPECT_TRUE(used);
}

TEST(Policy, VariantOverTheSloAtBatchOneIsKeptWhenLargerBatchesMeetIt) {
  // Like ramsis-text's bert_mini at SLO 100 ms (p95 123 ms at batch 1, 24-56 ms at 2-8):
  // an outlier at batch 1 must not remove the variant's other, valid actions.
  ProfileSuite suite = sloserve::testing::SmallSuite();
  const VariantId v = suite.AddVariant(VariantSpec{"mini", 0, 76.0, 0, Duration(0)});
  suite.AddLatency(0, v, 1, LatencyDistribution(std::vector<int64_t>(5, 90000)));
  for (int b = 2; b <= 8; ++b) {
    suite.AddLatency(0, v, b, LatencyDistribution(std::vector<int64_t>(5, 12000 + 2000 * b)));
  }
  MdpOptions o = SmallOptions(200, 2);
  auto m = MdpModel::Build(suite, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const std::vector<std::string> names = m->VariantNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "mini"), names.end()) << m->notes();
  auto p = GeneratePolicy(suite, o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Never at batch 1 (90 ms > SLO 60 ms) ...
  for (int j = 0; j < p->num_levels(); ++j) {
    EXPECT_NE(p->VariantName(p->data().table[j].variant), "mini") << j;
  }
  // ... but chosen where "slow" (35 ms at batch 2) cannot meet the slack.
  EXPECT_EQ(p->VariantName(p->Decide(2, Millis(30)).variant), "mini");
  // A variant over the SLO at every batch size is still dropped.
  o.slo = Millis(15);
  m = MdpModel::Build(suite, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->VariantNames(), (std::vector<std::string>{"fast"}));
  EXPECT_NE(m->notes().find("dropped mini: latency > SLO at every batch size"), std::string::npos)
      << m->notes();
}

TEST(Policy, RamsisProfilesKeepTheVariantsFasterAtLargerBatches) {
  // The embedded profiles: batch-1 Pareto pruning would leave 7 image variants at
  // 150 ms and 3 BERTs at 100 ms.
  auto image = LoadSuite("ramsis-image");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  MdpOptions o;
  o.slo = Millis(150);
  std::string notes;
  auto kept = ResolveVariants(*image, &o, &notes);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  auto has = [](const std::vector<ModelVariant>& vs, const std::string& name) {
    return std::any_of(vs.begin(), vs.end(), [&](const ModelVariant& v) { return v.name == name; });
  };
  EXPECT_TRUE(has(*kept, "shufflenet_v2_x1_5")) << notes;
  EXPECT_TRUE(has(*kept, "mobilenet_v3_large"));
  EXPECT_FALSE(has(*kept, "googlenet"));  // slower at every batch and less accurate
  for (const ModelVariant& v : *kept) {   // nothing kept is dominated at every batch
    for (const ModelVariant& u : *kept) {
      if (&u == &v || u.accuracy < v.accuracy || u.max_batch < v.max_batch) continue;
      bool faster_everywhere = true;
      for (int b = 1; b <= v.max_batch; ++b) faster_everywhere &= u.Latency(b) <= v.Latency(b);
      EXPECT_FALSE(faster_everywhere && (u.accuracy > v.accuracy || u.latency_us != v.latency_us))
          << v.name << " dominated by " << u.name;
    }
  }
  auto text = LoadSuite("ramsis-text");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  MdpOptions t;
  t.slo = Millis(100);
  notes.clear();
  kept = ResolveVariants(*text, &t, &notes);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_TRUE(has(*kept, "bert_mini")) << notes;
  EXPECT_FALSE(has(*kept, "bert_base"));  // 137 ms at batch 1, slower beyond
}

TEST(Policy, KeptVariantsRaiseTheExpectedAccuracyNearCapacity) {
  // A configuration none of the reproductions used: image, 40 workers, SLO 150 ms,
  // 2,100 qps (52.5 qps per worker, near what the SLO allows). The batch-1 Pareto set
  // (the paper's 7 models within 150 ms) against every variant the MDP keeps.
  auto image = LoadSuite("ramsis-image");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  MdpOptions o;
  o.slo = Millis(150);
  o.workers = 40;
  o.load_qps = 2100;
  o.discretization.d = 50;
  auto all = GeneratePolicy(*image, o);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  o.variants = {"shufflenet_v2_x0_5", "mobilenet_v3_large", "efficientnet_b0",  "efficientnet_b2",
                "efficientnet_b3",    "efficientnet_b4",    "efficientnet_v2_s"};
  auto front = GeneratePolicy(*image, o);
  ASSERT_TRUE(front.ok()) << front.status().ToString();
  EXPECT_LT(all->expected_violation(), 0.05);
  EXPECT_GT(all->expected_accuracy(), front->expected_accuracy() + 2.0)
      << all->expected_accuracy() << " vs " << front->expected_accuracy();
}

TEST(Policy, ImpossibleSloIsAClearError) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  MdpOptions o = SmallOptions();
  o.slo = Millis(8);  // fast needs 10 ms at batch 1
  auto p = GeneratePolicy(suite, o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(p.status().message().find("impossible SLO"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("fast"), std::string::npos);
}

TEST(Policy, LoadBeyondCapacityGivesAMarkedDegradedPolicy) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  // fast peaks at 8 rows / 24 ms = 333 qps per worker; ask for 2 x 2000.
  auto p = GeneratePolicy(suite, SmallOptions(4000, 2));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->overloaded());
  EXPECT_NE(p->data().notes.find("overloaded"), std::string::npos);
  EXPECT_GT(p->expected_violation(), 0.5);
  EXPECT_GT(p->data().full_state_probability, 0.5);
  EXPECT_EQ(p->VariantName(p->Decide(9, Millis(0)).variant), "fast");
}

TEST(Policy, MissingProfileEntriesAreHandled) {
  ProfileSuite s = sloserve::testing::SmallSuite(8);
  // "gappy": profiled at 1, 2, 4 only (3 rounds up to 4; >4 is not possible).
  VariantSpec gappy{"gappy", 0, 75.0, 0, Duration(0)};
  const VariantId g = s.AddVariant(gappy);
  for (int b : {1, 2, 4}) {
    s.AddLatency(0, g, b, LatencyDistribution(std::vector<int64_t>(5, 15000 + 6000 * b)));
  }
  // "ghost": no latency profile at all.
  s.AddVariant(VariantSpec{"ghost", 0, 90.0, 0, Duration(0)});
  MdpOptions o = SmallOptions();
  o.pareto_prune = false;
  auto m = MdpModel::Build(s, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_NE(m->notes().find("skipped ghost"), std::string::npos);
  for (const ModelVariant& v : m->variants()) {
    if (v.name == "gappy") {
      EXPECT_EQ(v.max_batch, 4);
      EXPECT_EQ(v.Latency(3), v.Latency(4));
    }
  }
  auto p = GeneratePolicy(s, o);
  ASSERT_TRUE(p.ok());
  for (int n = 1; n <= o.max_queue; ++n) {
    for (int j = 0; j < p->num_levels(); ++j) {
      const Action a = p->data().table[(n - 1) * p->num_levels() + j];
      EXPECT_LE(a.batch, s.MaxBatch(0, a.variant));
    }
  }
  o.variants = {"fast", "ghost"};
  auto bad = GeneratePolicy(s, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no latency profile"), std::string::npos);
  o.variants = {"nope"};
  EXPECT_EQ(GeneratePolicy(s, o).status().code(), StatusCode::kNotFound);
}

TEST(Policy, LateActionUsesTheFastestVariantAtThatBatchSize) {
  // "fast" is fastest at batch 1 but has a 90 ms outlier at batch 2 (like bert_tiny).
  ProfileSuite s = sloserve::testing::SmallSuite();
  s.AddLatency(0, 0, 2, LatencyDistribution(std::vector<int64_t>(5, 90000)));
  auto m = MdpModel::Build(s, SmallOptions());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->variants()[m->LateAction(1).variant].name, "fast");
  EXPECT_EQ(m->variants()[m->LateAction(2).variant].name, "slow");
  EXPECT_EQ(m->LateAction(2).batch, 2);
  const Pair* p = m->PairsBegin(m->StateIndex(2, 0));
  ASSERT_EQ(m->NumPairs(m->StateIndex(2, 0)), 1);
  EXPECT_FALSE(p->met);
  EXPECT_EQ(m->variants()[p->action.variant].name, "slow");
}

TEST(Policy, OversizedMdpIsRefused) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  MdpOptions o = SmallOptions(200, 100000);
  o.discretization = {DiscretizationKind::kFixedLength, 1000};
  auto m = MdpModel::Build(suite, o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kResourceExhausted);
  o.workers = 2;
  o.load_qps = -1;
  EXPECT_EQ(GeneratePolicy(suite, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(Policy, LateActionCappedByFastestMaxBatchLeavesQueries) {
  // Queue bound above every profiled batch: the full state serves 4 and leaves the rest.
  const ProfileSuite suite = sloserve::testing::SmallSuite(4);
  MdpOptions o = SmallOptions(300, 2);
  auto p = GeneratePolicy(suite, o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->data().full_action.batch, 4);
  EXPECT_LE(p->Decide(8, Millis(0)).batch, 4);
}

}  // namespace
}  // namespace sloserve::mdp
