// The engine's cost per query with many models on one pool (issue 31): a synthetic suite
// of N models (one variant each, batches of 1-8 on one hardware type, SLO 200 ms, built
// with ParseProfileText), Poisson arrivals at 4,000 qps spread uniformly over the models
// for 10 s (~40k queries) on 32 workers, `edf` batching with `fixed` selection, under
// round-robin dispatch (per-worker queues, one per model with queries waiting) and the
// shared queue (one central queue per model). Reports CPU time per query.
//   build/bench/multi_model_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sloserve/core/rng.h"
#include "sloserve/engine/clock.h"
#include "sloserve/engine/driver.h"
#include "sloserve/engine/engine.h"
#include "sloserve/exec/profile_executor.h"
#include "sloserve/policy/policy_spec.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

constexpr int kWorkers = 32;
constexpr double kQps = 4000;
constexpr Duration kHorizon = Seconds(10);
constexpr Duration kSlo = Millis(200);

// N models m0..m{N-1}, each with one variant v<i> on hardware "cpu": latency 2 ms + 0.5 ms
// per row (three samples around it), batches 1, 2, 4, 8.
const ProfileSuite& ModelsSuite(int n) {
  static std::map<int, ProfileSuite>* made = new std::map<int, ProfileSuite>();
  auto it = made->find(n);
  if (it != made->end()) return it->second;
  std::string text = "sloserve-profile 1\nsuite bench-models-" + std::to_string(n) +
                     "\nprovenance synthetic (bench/multi_model_bench.cc)\nhardware cpu 1 8 0\n";
  for (int i = 0; i < n; ++i) {
    const std::string m = std::to_string(i);
    text += "task m" + m + " 200000 input FP32 -1\n";
    text += "variant v" + m + " m" + m + " 70 10 1000000\n";
    for (int k : {1, 2, 4, 8}) {
      const int us = 2000 + 500 * k;
      text += "latency cpu v" + m + " " + std::to_string(k) + " " + std::to_string(us - 100) + " " +
              std::to_string(us) + " " + std::to_string(us + 100) + "\n";
    }
  }
  auto suite = ParseProfileText(text, "multi_model_bench");
  if (!suite.ok()) {
    std::fprintf(stderr, "%s\n", suite.status().ToString().c_str());
    std::abort();
  }
  return made->emplace(n, std::move(suite).value()).first->second;
}

class PoissonOverModels : public ArrivalSource {
 public:
  PoissonOverModels(int models, uint64_t seed) : models_(models), rng_(MakeRng(seed, "bench")) {
    Advance();
  }
  TimePoint NextArrival() const override { return next_; }
  void AdmitNext(Engine& engine, TimePoint now) override {
    Query q;
    q.task = static_cast<TaskId>(Uniform01(rng_) * models_);
    if (q.task >= static_cast<TaskId>(models_)) q.task = static_cast<TaskId>(models_ - 1);
    q.deadline = now + kSlo;
    engine.Submit(q, now);
    Advance();
  }

 private:
  void Advance() {
    const double gap_s = -std::log(1.0 - Uniform01(rng_)) / kQps;
    t_ += gap_s;
    next_ = t_ * 1e6 < static_cast<double>(kHorizon.count())
                ? TimePoint(Duration(static_cast<int64_t>(t_ * 1e6)))
                : kTimeInfinite;
  }
  int models_;
  Rng rng_;
  double t_ = 0;
  TimePoint next_ = kTimeInfinite;
};

void RunModels(benchmark::State& state, const std::string& dispatch) {
  const int models = static_cast<int>(state.range(0));
  const ProfileSuite& suite = ModelsSuite(models);
  int64_t queries = 0;
  double violation = 0;
  for (auto _ : state) {
    PolicySpec spec;
    spec.dispatch = dispatch;
    spec.batching = "edf";
    spec.selection = "fixed";
    auto policies = MakePolicySet(spec);
    if (!policies.ok()) {
      state.SkipWithError(policies.status().ToString().c_str());
      return;
    }
    std::vector<WorkerSpec> workers(kWorkers);
    ProfileExecutor executor(ServiceTimeModel(&suite, ServiceTimeOptions{}, 1));
    Driver driver(DriverOptions{});
    EngineOptions opts;
    opts.slo = kSlo;
    auto engine = Engine::Create(&suite, workers, std::move(policies).value(), &executor, opts, 1);
    if (!engine.ok()) {
      state.SkipWithError(engine.status().ToString().c_str());
      return;
    }
    PoissonOverModels arrivals(models, 7);
    driver.Bind(engine->get(), &executor);
    driver.SetArrivals(&arrivals);
    ManualClock clock;
    driver.RunVirtual(&clock);
    const MetricsSummary m = (*engine)->Summarize(std::max(clock.Now(), TimePoint(kHorizon)));
    queries += m.arrived;
    violation = m.violation_rate;
  }
  // CPU seconds per query (shown with a unit prefix: "2.1u" = 2.1 µs).
  state.counters["cpu_per_query"] = benchmark::Counter(
      static_cast<double>(queries), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["queries"] =
      static_cast<double>(queries) / static_cast<double>(state.iterations());
  state.counters["violation"] = violation;
}

void BM_ModelsOnOnePool_RoundRobin(benchmark::State& state) {
  RunModels(state, "round_robin");
}
void BM_ModelsOnOnePool_Shared(benchmark::State& state) {
  RunModels(state, "shared");
}

BENCHMARK(BM_ModelsOnOnePool_RoundRobin)
    ->Arg(1)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1);
BENCHMARK(BM_ModelsOnOnePool_Shared)
    ->Arg(1)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
