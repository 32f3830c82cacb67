// Policy sets: refinement across loads, the text format, the cache, and the synthetic
// Pareto suite of appendix E.
#include "sloserve/mdp/policy_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>

#include "mdp/mdp_test_util.h"
#include "sloserve/mdp/policy_io.h"
#include "sloserve/mdp/solver.h"
#include "sloserve/mdp/synthetic.h"
#include "support/temp_dir.h"

namespace sloserve::mdp {
namespace {

using testing::SmallOptions;

TEST(PolicySet, AdjacentAccuraciesDifferByAtMostTheStep) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  PolicySetOptions set;
  set.min_qps = 20;
  set.max_qps = 900;
  set.accuracy_step = 0.005;  // half a percentage point
  set.threads = 2;
  int calls = 0;
  auto ps = GeneratePolicySet(suite, SmallOptions(), set,
                              [&](int done, int, const Policy&) { calls = done; });
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  ASSERT_GE(ps->size(), 3u);
  EXPECT_EQ(calls, static_cast<int>(ps->size()));
  EXPECT_DOUBLE_EQ(ps->front().load_qps(), 20);
  EXPECT_DOUBLE_EQ(ps->back().load_qps(), 900);
  const double min_gap = (set.max_qps - set.min_qps) / 1024;
  for (size_t i = 1; i < ps->size(); ++i) {
    const Policy& a = (*ps)[i - 1];
    const Policy& b = (*ps)[i];
    EXPECT_LT(a.load_qps(), b.load_qps());
    if (b.load_qps() - a.load_qps() > 2 * min_gap) {
      EXPECT_LE(std::fabs(a.expected_accuracy() - b.expected_accuracy()), 0.5 + 1e-9)
          << a.load_qps() << " -> " << b.load_qps();
    }
  }
  EXPECT_EQ(SelectPolicy(*ps, 10), &ps->front());
  EXPECT_EQ(SelectPolicy(*ps, 900), &ps->back());
  EXPECT_EQ(SelectPolicy(*ps, 901), nullptr);
}

TEST(PolicySet, ProgressTotalCoversTheWholeSet) {
  // After the first round the total counts one policy per accuracy step between the end
  // loads, not only the round in flight; it never falls below what is done.
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  PolicySetOptions set;
  set.min_qps = 20;
  set.max_qps = 900;
  set.accuracy_step = 0.005;
  std::vector<std::pair<int, int>> calls;
  auto ps = GeneratePolicySet(suite, SmallOptions(), set, [&](int done, int total, const Policy&) {
    calls.emplace_back(done, total);
  });
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  ASSERT_GE(calls.size(), 4u);
  const double span = std::fabs(ps->back().expected_accuracy() - ps->front().expected_accuracy());
  EXPECT_GE(calls[2].second, static_cast<int>(std::ceil(span / 0.5)) + 1);
  for (const auto& [done, total] : calls) EXPECT_LE(done, total);
}

TEST(PolicySet, CancelStopsTheGeneration) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  std::atomic<bool> cancel{false};
  PolicySetOptions set;
  set.min_qps = 20;
  set.max_qps = 900;
  set.accuracy_step = 0.005;
  set.cancel = &cancel;
  int calls = 0;
  auto ps = GeneratePolicySet(suite, SmallOptions(), set, [&](int, int, const Policy&) {
    if (++calls == 2) cancel = true;
  });
  EXPECT_EQ(ps.status().code(), StatusCode::kUnavailable) << ps.status().ToString();
  EXPECT_EQ(calls, 2);  // one thread: nothing started after the flag was set
}

// A stop must not wait for a whole value iteration or power iteration (minutes under the
// sanitizers for a large MDP): both look at the flag every sweep.
TEST(PolicySet, CancelStopsASolveAtItsNextSweep) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  MdpOptions o = SmallOptions();
  o.load_qps = 300;
  auto m = MdpModel::Build(suite, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const SolveResult full = Solve(*m, o.solver);
  ASSERT_TRUE(full.converged);
  ASSERT_GT(full.sweeps, 1);
  std::atomic<bool> cancel{true};
  SolverOptions cancelled = o.solver;
  cancelled.cancel = &cancel;
  const SolveResult stopped = Solve(*m, cancelled);
  EXPECT_FALSE(stopped.converged);
  EXPECT_EQ(stopped.sweeps, 0);
  EXPECT_EQ(Stationary(*m, full.choice, cancelled).iterations, 0);
  EXPECT_GT(Stationary(*m, full.choice, o.solver).iterations, 0);
  // No policy is built from the stopped solve's incomplete choice (it has -1 entries).
  MdpOptions oc = o;
  oc.solver.cancel = &cancel;
  auto mc = MdpModel::Build(suite, oc);
  ASSERT_TRUE(mc.ok()) << mc.status().ToString();
  EXPECT_EQ(PolicyFromModel(suite, *mc, nullptr, nullptr).status().code(),
            StatusCode::kUnavailable);
}

TEST(PolicySet, SameSetOnAnyThreadCount) {
  // Each round's MDPs are built on worker threads, and the cross-load checks done in them
  // (a new load's upper neighbour) are kept for later: the set must not depend on which
  // thread built what, nor on the order the checks arrive in.
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  PolicySetOptions set;
  set.min_qps = 20;
  set.max_qps = 900;
  set.accuracy_step = 0.005;
  set.threads = 1;
  auto one = GeneratePolicySet(suite, SmallOptions(), set);
  set.threads = 3;
  auto three = GeneratePolicySet(suite, SmallOptions(), set);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  ASSERT_GE(one->size(), 3u);
  EXPECT_EQ(WritePolicySetText("k", *one), WritePolicySetText("k", *three));
}

TEST(PolicySet, EachPolicyServesTheLoadsBelowItWithinTheStep) {
  // Online, loads in (lo, hi] use hi's policy. On profiles that are not monotone in the
  // batch size (ramsis-text) a policy for a higher load can do much worse at a lower one
  // than the accuracy rule assumes; the set is refined until, evaluated at lo, hi's policy
  // earns at most the step less accuracy per served query than lo's. A configuration no
  // reproduction uses: text, SLO 80 ms, 10 workers, D = 50 (with the accuracy rule alone
  // the 1,025 qps policy is adjacent to 537.5 qps and fails this).
  auto text = LoadSuite("ramsis-text");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  MdpOptions base;
  base.slo = Millis(80);
  base.workers = 10;
  base.discretization.d = 50;
  PolicySetOptions set;
  set.min_qps = 50;
  set.max_qps = 2000;
  set.threads = 2;
  auto ps = GeneratePolicySet(*text, base, set);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  const double min_gap = (set.max_qps - set.min_qps) / 1024;
  for (size_t i = 1; i < ps->size(); ++i) {
    const Policy& lo = (*ps)[i - 1];
    const Policy& hi = (*ps)[i];
    if (hi.load_qps() - lo.load_qps() <= 2 * min_gap) continue;
    MdpOptions o = base;
    o.load_qps = lo.load_qps();
    auto ev = EvaluatePolicy(*text, o, hi);
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_GE(ev->accuracy_per_query, lo.data().accuracy_per_query - 1.0 - 1e-6)
        << hi.load_qps() << " qps policy at " << lo.load_qps() << " qps";
  }
}

TEST(PolicySet, TextFormatRoundTrips) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  MdpOptions o = SmallOptions(250, 2);
  o.arrival = {ArrivalKind::kGamma, 1.5};
  o.batching = BatchingKind::kVariable;
  auto p = GeneratePolicy(suite, o);
  ASSERT_TRUE(p.ok());
  const std::string text = WritePolicySetText("k", {*p});
  auto back = ParsePolicySetText(text, "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->policies.size(), 1u);
  const PolicyData& a = p->data();
  const PolicyData& b = back->policies[0].data();
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.table, b.table);
  EXPECT_EQ(a.full_action, b.full_action);
  EXPECT_EQ(a.levels_us, b.levels_us);
  EXPECT_EQ(a.variant_names, b.variant_names);
  EXPECT_EQ(a.expected_accuracy, b.expected_accuracy);
  EXPECT_EQ(a.load_qps, b.load_qps);
  EXPECT_EQ(a.arrival.cv, b.arrival.cv);
  EXPECT_EQ(WritePolicySetText("k", back->policies), text);
  // Errors name the line.
  auto bad = ParsePolicySetText(
      "sloserve-mdp-policy-set 1\nset_key k\ncount 1\npolicy 1\nbogus 3\n", "f.mdpset");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("f.mdpset:5: unknown field 'bogus'"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(FormatPolicyTable(*p).find("full |"), std::string::npos);
}

// The lines of `text` with the first one starting with `prefix` replaced by `line`.
std::string ReplaceLine(const std::string& text, const std::string& prefix,
                        const std::string& line) {
  const size_t at = text.find("\n" + prefix) + 1;
  return text.substr(0, at) + line + text.substr(text.find('\n', at));
}

// A corrupt count, cell or number in a policy-set file is refused with file:line before
// anything is sized by it: `levels 999999999999 ...` allocated ~24 GB and was OOM-killed.
TEST(PolicySet, CorruptFilesAreRefusedNamingTheLine) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  auto p = GeneratePolicy(suite, SmallOptions(250, 2));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::string text = WritePolicySetText("k", {*p});
  const size_t levels = p->data().levels_us.size();
  ASSERT_GT(levels, 2u);
  const size_t levels_at = text.find("\nlevels ") + 1;
  const std::string levels_line = text.substr(levels_at, text.find('\n', levels_at) - levels_at);
  const int levels_line_no =
      static_cast<int>(std::count(text.begin(), text.begin() + levels_at, '\n')) + 1;
  const std::string values = levels_line.substr(levels_line.find(' ', 7));
  const std::string row1 =
      text.substr(text.find("\nrow 1 ") + 1,
                  text.find('\n', text.find("\nrow 1 ") + 1) - text.find("\nrow 1 ") - 1);
  const std::string at = "f.mdpset:" + std::to_string(levels_line_no) + ": ";
  const PolicyData& d = p->data();
  ASSERT_GE(d.variant_ids.size(), 2u);
  const std::string first_variant =
      "variant " + std::to_string(d.variant_ids[0]) + " " + d.variant_names[0];
  const std::string second_variant = "variant " + std::to_string(d.variant_ids[1]) + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {ReplaceLine(text, "levels ", "levels 999999999999" + values),
       at + "levels count 999999999999 but " + std::to_string(levels) + " values on the line"},
      {ReplaceLine(text, "levels ", "levels 5" + values),
       at + "levels count 5 but " + std::to_string(levels) + " values on the line"},
      {ReplaceLine(text, "levels ", "levels -1" + values), at + "bad levels count '-1'"},
      {ReplaceLine(text, "levels ", "levels x" + values), at + "bad levels count 'x'"},
      {ReplaceLine(text, "row 1 ", row1 + " 0:1"),
       "row 1: more than the " + std::to_string(levels) + " cells of the levels"},
      {ReplaceLine(text, "load_qps ", "load_qps -10"),
       "bad load_qps '-10' (expected a number >= 0)"},
      {ReplaceLine(text, "load_qps ", "load_qps 10x"), "bad load_qps '10x'"},
      {ReplaceLine(text, second_variant, first_variant), first_variant + " given twice"},
  };
  for (const auto& [bad, message] : cases) {
    auto parsed = ParsePolicySetText(bad, "f.mdpset");
    ASSERT_FALSE(parsed.ok()) << message;
    EXPECT_NE(parsed.status().message().find(message), std::string::npos)
        << parsed.status().message();
    EXPECT_EQ(parsed.status().message().rfind("f.mdpset:", 0), 0u) << parsed.status().message();
  }
}

// A cached set whose variant names are not the suite's (an edited file keeps its key
// line) is not used: it is a cache miss, regenerated, not a set of unknown variants.
// The set the cache tests generate (small: 50-400 qps).
PolicySetOptions CacheTestSet() {
  PolicySetOptions set;
  set.min_qps = 50;
  set.max_qps = 400;
  return set;
}

TEST(PolicySet, ACachedSetOfUnknownVariantsIsNotUsed) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  const sloserve::testing::ScopedTempDir tmp("mdp-variants-test");
  const std::string& dir = tmp.path();
  const PolicySetOptions set = CacheTestSet();
  auto made = LoadOrGeneratePolicySet(suite, SmallOptions(), set, dir);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(CheckPolicySetVariants(*made, suite).ok());
  auto key = PolicySetKey(suite, SmallOptions(), set);
  ASSERT_TRUE(key.ok());
  const std::string path = PolicySetCachePath(dir, *key);
  ASSERT_TRUE(LoadCachedPolicySet(suite, SmallOptions(), set, dir).ok());
  // Rename the first variant of every policy to one the suite does not have.
  const PolicyData& d = made->front().data();
  const std::string from =
      "variant " + std::to_string(d.variant_ids[0]) + " " + d.variant_names[0] + "\n";
  const std::string to = "variant " + std::to_string(d.variant_ids[0]) + " no_such_model\n";
  std::string text = WritePolicySetText(*key, *made);
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
    text.replace(at, from.size(), to);
  auto edited = ParsePolicySetText(text, "edited");
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  const Status check = CheckPolicySetVariants(edited->policies, suite);
  EXPECT_NE(check.message().find("'no_such_model' is not a variant of suite"), std::string::npos)
      << check.message();
  ASSERT_TRUE(SavePolicySet(path, *key, edited->policies).ok());
  EXPECT_EQ(LoadCachedPolicySet(suite, SmallOptions(), set, dir).status().code(),
            StatusCode::kNotFound);
}

TEST(PolicySet, CacheIsKeyedAndReused) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  const sloserve::testing::ScopedTempDir tmp("mdp-cache-test");
  const std::string& dir = tmp.path();
  const PolicySetOptions set = CacheTestSet();
  bool cached = true;
  auto first = LoadOrGeneratePolicySet(suite, SmallOptions(), set, dir, nullptr, &cached);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(cached);
  auto second = LoadOrGeneratePolicySet(suite, SmallOptions(), set, dir, nullptr, &cached);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(cached);
  ASSERT_EQ(first->size(), second->size());
  for (size_t i = 0; i < first->size(); ++i) {
    EXPECT_EQ((*first)[i].data().table, (*second)[i].data().table);
  }
  MdpOptions other = SmallOptions();
  other.workers = 3;  // a different key
  auto k1 = PolicySetKey(suite, SmallOptions(), set);
  auto k2 = PolicySetKey(suite, other, set);
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_NE(*k1, *k2);
  EXPECT_NE(PolicySetCachePath(dir, *k1), PolicySetCachePath(dir, *k2));
}

TEST(Synthetic, SixtyModelsAlongTheRamsisImageFront) {
  auto base = LoadSuite("ramsis-image");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  SyntheticSuiteOptions so;
  so.front = RamsisImageParetoVariants();
  auto syn = MakeSyntheticParetoSuite(*base, so);
  ASSERT_TRUE(syn.ok()) << syn.status().ToString();
  EXPECT_EQ(syn->variants().size(), 60u);
  for (const std::string& name : so.front) EXPECT_TRUE(syn->FindVariant(name).has_value());
  // A synthetic variant's p95 lies between its neighbours'.
  auto lo = syn->FindVariant("efficientnet_b0");
  auto hi = syn->FindVariant("efficientnet_b2");
  ASSERT_TRUE(lo && hi);
  for (const VariantSpec& v : syn->variants()) {
    if (v.name.rfind("synth_efficientnet_b0_efficientnet_b2_", 0) != 0) continue;
    const VariantId id = *syn->FindVariant(v.name);
    const auto p = syn->Latency(0, id, 1)->Quantile(0.95);
    EXPECT_GE(p, std::min(syn->Latency(0, *lo, 1)->Quantile(0.95),
                          syn->Latency(0, *hi, 1)->Quantile(0.95)));
    EXPECT_LE(p, std::max(syn->Latency(0, *lo, 1)->Quantile(0.95),
                          syn->Latency(0, *hi, 1)->Quantile(0.95)));
  }
}

}  // namespace
}  // namespace sloserve::mdp
