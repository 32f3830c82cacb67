// RAMSIS policy generation time (RAMSIS Table 2): image suite, 150 ms SLO, 60 workers,
// 2,000 qps, max queue 32, p95 latencies. The paper's Python: 132 s (FLD D=100, maximal
// batching, 9 models), 1,355 s (60 synthetic models), 3,694 s (MD, variable batching).
//   build-mdp/bench/mdp_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "bench_suites.h"
#include "sloserve/mdp/model.h"
#include "sloserve/mdp/policy.h"
#include "sloserve/mdp/policy_set.h"
#include "sloserve/mdp/synthetic.h"
#include "sloserve/profile/profile.h"

namespace sloserve::mdp {
namespace {

const ProfileSuite& ImageSuite() {
  return bench::Suite("ramsis-image");
}

const ProfileSuite& Synthetic60() {
  static const ProfileSuite* suite = [] {
    SyntheticSuiteOptions so;
    so.front = RamsisImageParetoVariants();
    auto s = MakeSyntheticParetoSuite(ImageSuite(), so);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
      std::abort();
    }
    return new ProfileSuite(std::move(s).value());
  }();
  return *suite;
}

MdpOptions PaperOptions() {
  MdpOptions o;
  o.task = "image";
  o.slo = Millis(150);
  o.workers = 60;
  o.load_qps = 2000;
  o.max_queue = 32;
  o.latency_quantile = 0.95;
  o.discretization = {DiscretizationKind::kFixedLength, 100};
  o.batching = BatchingKind::kMaximal;
  return o;
}

void Run(benchmark::State& state, const ProfileSuite& suite, const MdpOptions& o) {
  Policy last;
  for (auto _ : state) {
    auto p = GeneratePolicy(suite, o);
    if (!p.ok()) {
      state.SkipWithError(p.status().ToString().c_str());
      return;
    }
    last = std::move(p).value();
  }
  auto m = MdpModel::Build(suite, o);
  if (m.ok()) {
    state.counters["variants"] = static_cast<double>(m->variants().size());
    state.counters["states"] = m->num_states();
    state.counters["pairs"] = static_cast<double>(m->pairs().size());
  }
  state.counters["sweeps"] = last.data().sweeps;
  state.counters["exp_acc"] = last.expected_accuracy();
  state.counters["exp_viol_pct"] = 100 * last.expected_violation();
}

void BM_Fld100_Maximal_9Models(benchmark::State& state) {
  MdpOptions o = PaperOptions();
  o.variants = RamsisImageParetoVariants();
  Run(state, ImageSuite(), o);
}
BENCHMARK(BM_Fld100_Maximal_9Models)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Fld100_Maximal_9Models_Authors100Sweeps(benchmark::State& state) {
  MdpOptions o = PaperOptions();
  o.variants = RamsisImageParetoVariants();
  o.solver.criterion = Criterion::kUndiscountedSweeps;
  o.solver.fixed_sweeps = 100;
  Run(state, ImageSuite(), o);
}
BENCHMARK(BM_Fld100_Maximal_9Models_Authors100Sweeps)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same policy with every pair evaluated in every sweep (no action elimination; the
// policy is bit-identical), to measure what the elimination saves.
void BM_Fld100_Maximal_9Models_NoElimination(benchmark::State& state) {
  MdpOptions o = PaperOptions();
  o.variants = RamsisImageParetoVariants();
  o.solver.eliminate_actions = false;
  Run(state, ImageSuite(), o);
}
BENCHMARK(BM_Fld100_Maximal_9Models_NoElimination)->Unit(benchmark::kMillisecond)->Iterations(3);

// Issue 15's second row: every image variant (26, 22 profiled and kept by the pruning).
void BM_Fld100_Maximal_WholeImageSuite(benchmark::State& state) {
  Run(state, ImageSuite(), PaperOptions());
}
BENCHMARK(BM_Fld100_Maximal_WholeImageSuite)->Unit(benchmark::kMillisecond)->Iterations(3);

// The image policy set serve needs (40-4,000 qps, accuracy step 0.01), cross-load checks
// included; one run.
void RunImageSet(benchmark::State& state, int threads, bool eliminate_actions) {
  PolicySetOptions set;
  set.min_qps = 40;
  set.max_qps = 4000;
  set.threads = threads;
  MdpOptions o = PaperOptions();
  o.solver.eliminate_actions = eliminate_actions;
  size_t count = 0;
  for (auto _ : state) {
    auto ps = GeneratePolicySet(ImageSuite(), o, set);
    if (!ps.ok()) {
      state.SkipWithError(ps.status().ToString().c_str());
      return;
    }
    count = ps->size();
  }
  state.counters["policies"] = static_cast<double>(count);
}

// Issue 15's third row, on 2 threads (wall time).
void BM_PolicySet_WholeImageSuite_40To4000(benchmark::State& state) {
  RunImageSet(state, 2, true);
}
BENCHMARK(BM_PolicySet_WholeImageSuite_40To4000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// The same set on one thread (CPU time is then the whole generation's), with action
// elimination (elimination:1, the default) and without (elimination:0): same policies.
void BM_PolicySet_WholeImageSuite_40To4000_OneThread(benchmark::State& state) {
  RunImageSet(state, 1, state.range(0) != 0);
}
BENCHMARK(BM_PolicySet_WholeImageSuite_40To4000_OneThread)
    ->ArgName("elimination")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_Fld100_Maximal_60Models(benchmark::State& state) {
  MdpOptions o = PaperOptions();
  o.task = "image";
  o.pareto_prune = false;  // the synthetic set is the front already
  Run(state, Synthetic60(), o);
}
BENCHMARK(BM_Fld100_Maximal_60Models)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Md_Variable_9Models(benchmark::State& state) {
  MdpOptions o = PaperOptions();
  o.variants = RamsisImageParetoVariants();
  o.discretization = {DiscretizationKind::kModelBased, 0};
  o.batching = BatchingKind::kVariable;
  Run(state, ImageSuite(), o);
}
BENCHMARK(BM_Md_Variable_9Models)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Fld100_Variable_9Models(benchmark::State& state) {
  MdpOptions o = PaperOptions();
  o.variants = RamsisImageParetoVariants();
  o.batching = BatchingKind::kVariable;
  Run(state, ImageSuite(), o);
}
BENCHMARK(BM_Fld100_Variable_9Models)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace sloserve::mdp
BENCHMARK_MAIN();
