// Kairos query distribution: the rectangular assignment solver and a full dispatch
// decision (docs/kairos.md#performance).
//   build/bench/kairos_bench --benchmark_counters_tabular=true
// BM_Assignment/<rows>/<cols>: one Solve() on a fresh random matrix each iteration
// (uniform costs in [0, 1000) with 30% of the entries replaced by a 10x penalty, the
// shape Kairos' Eq. 8 produces); matrix generation is excluded from the timing.
// BM_KairosAssign/<pending>/<instances>: one KairosDispatch::Assign on the kairos-recsys
// RM2 profile, instances split 1/3 g4dn.xlarge, 1/3 c5n.2xlarge, 1/3 r5n.large with one
// third idle, DeepRecSys query sizes (the matrix build, noise-free prediction and solve).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <deque>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/policy/assignment/linear_assignment.h"
#include "sloserve/policy/dispatch/kairos.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/policy/planning/kairos_config_pick.h"
#include "sloserve/policy/planning/kairos_upper_bound.h"
#include "sloserve/profile/profile.h"
#include "sloserve/workload/query_size_sampler.h"

namespace sloserve {
namespace {

void FillKairosLike(Rng& rng, std::vector<double>* cost) {
  for (double& c : *cost) {
    const double u = Uniform01(rng);
    c = u < 0.3 ? 10000.0 : Uniform01(rng) * 1000.0;
  }
}

void BM_Assignment(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  const int cols = static_cast<int>(state.range(1));
  Rng rng = MakeRng(1, "kairos-bench");
  constexpr int kMatrices = 16;
  std::vector<std::vector<double>> costs(kMatrices,
                                         std::vector<double>(static_cast<size_t>(rows * cols)));
  for (auto& c : costs) FillKairosLike(rng, &c);
  LinearAssignment solver;
  std::vector<int> out;
  size_t k = 0;
  for (auto _ : state) {
    auto total = solver.Solve(rows, cols, costs[k], &out);
    benchmark::DoNotOptimize(total);
    k = (k + 1) % kMatrices;
  }
}
BENCHMARK(BM_Assignment)
    ->Args({20, 20})
    ->Args({100, 100})
    ->Args({500, 50})
    ->Args({50, 500})
    ->Args({8, 20})
    ->Unit(benchmark::kMicrosecond);

const ProfileSuite& KairosSuite() {
  static const ProfileSuite* s = [] {
    auto r = LoadSuite(std::string(SLOSERVE_SOURCE_DIR) + "/profiles/kairos-recsys.prof");
    if (!r.ok()) std::abort();
    return new ProfileSuite(std::move(*r));
  }();
  return *s;
}

void BM_KairosAssign(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  const int instances = static_cast<int>(state.range(1));
  const ProfileSuite& suite = KairosSuite();
  const char* types[] = {"g4dn.xlarge", "c5n.2xlarge", "r5n.large"};
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.task = *suite.FindTask("rm2");
  ctx.slo = Millis(350);
  const TimePoint now = kTimeZero + Seconds(10);
  for (int i = 0; i < instances; ++i) {
    WorkerView w;
    w.id = static_cast<WorkerId>(i);
    w.hardware = *suite.FindHardware(types[i % 3]);
    w.busy = i % 3 != 0;
    w.busy_until = now + Millis(5 * (i % 7));
    ctx.workers.push_back(w);
  }
  auto policy = KairosDispatch::Create(PolicyParams()).value();
  if (!policy->Init(ctx).ok()) std::abort();
  auto sampler = MakeQuerySizeSampler("deeprecsys").value();
  Rng rng = MakeRng(2, "kairos-bench");
  std::vector<Query> table;
  std::deque<uint32_t> slots;
  for (int i = 0; i < pending; ++i) {
    Query q;
    q.id = static_cast<QueryId>(i + 1);
    q.task = ctx.task;
    q.size = sampler->Sample(rng);
    q.arrival = now - Millis(pending - i);
    q.deadline = q.arrival + Millis(350);
    table.push_back(q);
    slots.push_back(static_cast<uint32_t>(i));
  }
  QueueView view(&slots, &table, true);
  std::vector<Assignment> out;
  for (auto _ : state) {
    out.clear();
    policy->Assign(view, ctx.workers, now, &out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_KairosAssign)
    ->Args({20, 20})
    ->Args({100, 21})
    ->Args({100, 99})
    ->Unit(benchmark::kMicrosecond);

// BM_UpperBounds/<budget $/h>: Kairos' planning step without evaluation — the upper
// bound (Eq. 15) of every configuration with a g4dn.xlarge under the budget (2.5: the
// dataset's maxima, 331 configurations; 10: budget-derived maxima, 77,096), ranking and
// the similarity pick. The bound's per-type tables (10,000 DeepRecSys sizes) are built
// once outside the loop, as a planner would on each size-distribution update.
void BM_UpperBounds(benchmark::State& state) {
  const double budget = static_cast<double>(state.range(0)) / 10;
  const ProfileSuite& suite = KairosSuite();
  LatencyPredictor predictor;
  if (!predictor.Init(suite, 1).ok()) std::abort();
  auto sampler = MakeQuerySizeSampler("deeprecsys").value();
  Rng rng = MakeRng(1, "sizes");
  std::vector<int> sizes(10000);
  for (int& x : sizes) x = sampler->Sample(rng);
  const TaskId task = *suite.FindTask("rm2");
  auto ub =
      KairosUpperBound::Create(predictor, suite, suite.VariantsOfTask(task)[0], Millis(350), sizes);
  if (!ub.ok()) std::abort();
  ConfigSpace space =
      MakeConfigSpace(suite, budget,
                      budget <= 2.5 ? "g4dn.xlarge:5,c5n.2xlarge:6,r5n.large:17,t3.xlarge:15" : "")
          .value();
  space.min_count[ub->base()] = 1;
  size_t configs = 0;
  for (auto _ : state) {
    const std::vector<InstanceCounts> all = EnumerateConfigs(space);
    std::vector<double> bounds(all.size());
    for (size_t i = 0; i < all.size(); ++i) bounds[i] = ub->Bound(all[i]);
    const auto ranked = RankByBound(space, all, bounds);
    benchmark::DoNotOptimize(SimilarityPick(ranked, ub->base()));
    configs = all.size();
  }
  state.counters["configs"] = static_cast<double>(configs);
}
BENCHMARK(BM_UpperBounds)->Arg(25)->Arg(100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
