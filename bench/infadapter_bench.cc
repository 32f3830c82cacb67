// InfAdapter's Eq. 1 solved by GLPK and by the exact DP (docs/infadapter.md#performance).
//   build/bench/infadapter_bench --benchmark_counters_tabular=true
// BM_InfAdapterPaper/<lambda> (the GLPK MILP, the planner's solver) and
// BM_InfAdapterPaperDp/<lambda> (the exact DP, infadapter_dp.h, its cross-check): the paper's
// setting, the 5 ResNets of infadapter-resnet, B = 20 cores, SLO 750 ms, beta = 0.05, nothing
// loaded; one SolveInfAdapterMilp per iteration (the problem is built once). lambda 1000 is past
// the budget's capacity: two more solves (max capacity, then Eq. 1 at that capacity).
// BM_InfAdapterSynthetic[Dp]/<variants>/<budget>/<seed>: random variants (accuracy 60-80 %,
// th(k) = 0.8 (a + b k) with noise, 25% of the core counts above the SLO), every core
// count 1..budget allowed, lambda = 60% of what the budget can serve.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "sloserve/core/rng.h"
#include "sloserve/infadapter/capacity.h"
#include "sloserve/infadapter/dp.h"
#include "sloserve/infadapter/milp.h"
#include "sloserve/infadapter/problem.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "infadapter_bench: %s\n", s.ToString().c_str());
    std::abort();
  }
}

void Report(benchmark::State& state, const InfAdapterPlan& plan) {
  state.counters["objective"] = plan.objective;
  state.counters["cores"] = plan.total_cores;
  state.counters["acc"] = plan.average_accuracy;
  state.counters["short"] = plan.shortfall_rps;
}

StatusOr<InfAdapterPlan> Milp(const InfAdapterProblem& p) {
  return SolveInfAdapterMilp(p);
}

template <StatusOr<InfAdapterPlan> (*Solve)(const InfAdapterProblem&)>
void BM_Paper(benchmark::State& state) {
  auto suite = LoadSuite("infadapter-resnet");
  Check(suite.status());
  auto model = BuildInfAdapterCapacity(*suite);
  Check(model.status());
  InfAdapterRequest r;
  r.lambda_rps = static_cast<double>(state.range(0));
  r.budget_cores = 20;
  auto problem = MakeInfAdapterProblem(*model, r);
  Check(problem.status());
  InfAdapterPlan plan;
  for (auto _ : state) {
    auto p = Solve(*problem);
    Check(p.status());
    plan = std::move(p).value();
    benchmark::DoNotOptimize(plan);
  }
  Report(state, plan);
}
void PaperArgs(benchmark::internal::Benchmark* b) {
  for (int lambda : {10, 50, 100, 150, 1000}) b->Arg(lambda);
}
void BM_InfAdapterPaper(benchmark::State& state) {
  BM_Paper<Milp>(state);
}
void BM_InfAdapterPaperDp(benchmark::State& state) {
  BM_Paper<SolveInfAdapterDp>(state);
}
BENCHMARK(BM_InfAdapterPaper)->Apply(PaperArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InfAdapterPaperDp)->Apply(PaperArgs)->Unit(benchmark::kMillisecond);

InfAdapterProblem SyntheticProblem(int variants, int budget, uint64_t seed) {
  Rng rng = MakeRng(seed, "infadapter-bench");
  InfAdapterProblem p;
  p.budget_cores = budget;
  for (int m = 0; m < variants; ++m) {
    InfAdapterCandidate c;
    c.name = "v" + std::to_string(m);
    c.accuracy = 60 + 20 * Uniform01(rng);
    c.load_time_s = 5 + 4 * Uniform01(rng);
    if (Uniform01(rng) < 0.2) c.loaded_cores = {1 + static_cast<int>(Uniform01(rng) * budget)};
    const double a = -5 + 10 * Uniform01(rng), b = 3 + 20 * (1 - (c.accuracy - 60) / 20);
    for (int k = 1; k <= budget; ++k) {
      if (Uniform01(rng) < 0.25) continue;
      c.options.push_back({k, std::max(0.0, 0.8 * (a + b * k + 2 * (Uniform01(rng) - 0.5)))});
    }
    p.variants.push_back(std::move(c));
  }
  auto cap = InfAdapterMaxCapacity(p);
  Check(cap.status());
  p.lambda_rps = 0.6 * *cap;
  return p;
}

template <StatusOr<InfAdapterPlan> (*Solve)(const InfAdapterProblem&)>
void BM_Synthetic(benchmark::State& state) {
  const InfAdapterProblem problem =
      SyntheticProblem(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                       static_cast<uint64_t>(state.range(2)));
  InfAdapterPlan plan;
  for (auto _ : state) {
    auto p = Solve(problem);
    Check(p.status());
    plan = std::move(p).value();
    benchmark::DoNotOptimize(plan);
  }
  Report(state, plan);
  state.counters["optimal"] = plan.optimal;
}

// The 30 seeds of docs/infadapter.md#performance: 7 first, then 1..30.
void SyntheticArgs(benchmark::internal::Benchmark* b) {
  b->Args({5, 20, 7})->Args({10, 32, 7})->Args({20, 64, 7});
  for (int seed = 1; seed <= 30; ++seed) {
    if (seed != 7) b->Args({20, 64, seed});
  }
}

// BM_InfAdapterSynthetic: the GLPK MILP (the planner's solver); BM_InfAdapterSyntheticDp:
// the exact DP (infadapter_dp.h, `solver: dp`), the same plans.
void BM_InfAdapterSynthetic(benchmark::State& state) {
  BM_Synthetic<Milp>(state);
}
void BM_InfAdapterSyntheticDp(benchmark::State& state) {
  BM_Synthetic<SolveInfAdapterDp>(state);
}
BENCHMARK(BM_InfAdapterSynthetic)->Apply(SyntheticArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InfAdapterSyntheticDp)->Apply(SyntheticArgs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
