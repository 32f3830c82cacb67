// Kairos query distribution: the rectangular assignment solver and a full dispatch
// decision (docs/kairos.md#performance).
//   build/bench/kairos_bench --benchmark_counters_tabular=true
// BM_Assignment/<rows>/<cols>: one Solve() on a fresh random matrix each iteration
// (uniform costs in [0, 1000) with 30% of the entries replaced by a 10x penalty, the
// shape Kairos' Eq. 8 produces); matrix generation is excluded from the timing.
#include <benchmark/benchmark.h>

#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/policy/assignment/linear_assignment.h"

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

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
