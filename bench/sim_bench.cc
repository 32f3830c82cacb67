// Simulator speed: the 5-minute RAMSIS Twitter trace (27 x 10 s intervals, ~752k
// queries) on 60 workers, and a constant-load engine loop. Reports events/s.
//   build/bench/sim_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include "bench_suites.h"
#include "sloserve/core/embedded_files.h"
#include "sloserve/profile/profile.h"
#include "sloserve/sim/simulation.h"

namespace sloserve {
namespace {

const ProfileSuite& ImageSuite() {
  return bench::Suite("ramsis-image");
}

RunSpec TwitterSpec(const std::string& variant, const std::string& dispatch) {
  RunSpec spec;
  spec.suite = "ramsis-image";
  spec.task = "image";
  spec.workers = 60;
  spec.slo = Millis(150);
  spec.arrival.kind = "qps_interval_trace";
  spec.arrival.trace_path = std::string(kEmbeddedPrefix) + "traces/twitter_04_25_norm.txt";
  spec.policy.dispatch = dispatch;
  spec.policy.batching = "edf";
  spec.policy.options["variant"] = variant;
  return spec;
}

void RunAndCount(benchmark::State& state, const RunSpec& spec) {
  const ProfileSuite& suite = ImageSuite();
  int64_t events = 0, queries = 0;
  double violation = 0;
  for (auto _ : state) {
    auto r = RunSimulation(spec, suite);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    events += r->events;
    queries += r->summary.arrived;
    violation = r->summary.violation_rate;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["queries"] =
      static_cast<double>(queries) / static_cast<double>(state.iterations());
  state.counters["violation"] = violation;
}

// The fastest variant (over capacity only around the trace's 3,905 qps peak) ...
void BM_TwitterTrace60Workers_ShuffleNet(benchmark::State& state) {
  RunAndCount(state, TwitterSpec("shufflenet_v2_x0_5", "round_robin"));
}
// ... one that overloads (long queues: the engine's worst case) ...
void BM_TwitterTrace60Workers_EfficientNetB0(benchmark::State& state) {
  RunAndCount(state, TwitterSpec("efficientnet_b0", "round_robin"));
}
// ... and join-shortest-queue, O(workers) per dispatch.
void BM_TwitterTrace60Workers_Jsq(benchmark::State& state) {
  RunAndCount(state, TwitterSpec("shufflenet_v2_x0_5", "jsq"));
}

// Issue 15's sim row: one 30 s constant-load point of the RAMSIS comparison (Poisson
// 2,000 qps, ~60k queries, 60 workers, Jellyfish+ over a shared queue), as `sloserve sim`
// runs it on a one-policy config, minus the process start.
void BM_ConstantLoad30s_JellyfishPlus(benchmark::State& state) {
  RunSpec spec;
  spec.suite = "ramsis-image";
  spec.task = "image";
  spec.workers = 60;
  spec.slo = Millis(150);
  spec.arrival.kind = "poisson";
  spec.arrival.rate_qps = 2000;
  spec.arrival.horizon = Seconds(30);
  spec.policy.selection = "jellyfish_plus";
  spec.policy.batching = "edf";
  spec.policy.dispatch = "shared";
  RunAndCount(state, spec);
}

BENCHMARK(BM_ConstantLoad30s_JellyfishPlus)->Unit(benchmark::kMillisecond)->MinTime(1);
BENCHMARK(BM_TwitterTrace60Workers_ShuffleNet)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_TwitterTrace60Workers_EfficientNetB0)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_TwitterTrace60Workers_Jsq)->Unit(benchmark::kMillisecond)->MinTime(2);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
