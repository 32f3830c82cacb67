// ORLOJ's priority structure and scheduling decision (docs/orloj.md#performance).
//   build/bench/orloj_bench --benchmark_counters_tabular=true
// KineticMaxQueue at n pending: steady-state insert+erase pairs, updates, and best-query
// with time advancing (each query repairs the certificates that failed); a full
// OrlojBatching::NextBatch with ~n pending on the bimodal suite (16 arrivals per
// decision, a batch of up to 16 leaves); an online-profile refresh that rebuilds the
// score tables.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <deque>
#include <map>

#include "sloserve/core/rng.h"
#include "sloserve/policy/batching/orloj.h"
#include "sloserve/policy/batching/orloj_queue.h"
#include "sloserve/policy/selection/fixed.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

void Fill(KineticMaxQueue& q, Rng& rng, int n, std::vector<KineticMaxQueue::Handle>* handles) {
  for (int i = 0; i < n; ++i)
    handles->push_back(q.Insert(Uniform01(rng), Uniform01(rng), static_cast<uint64_t>(i)));
}

void BM_KineticInsertErase(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Rng rng = MakeRng(1, "bench");
  KineticMaxQueue q;
  std::vector<KineticMaxQueue::Handle> h;
  Fill(q, rng, n, &h);
  q.Best(1.0);
  uint64_t tag = static_cast<uint64_t>(n);
  for (auto _ : state) {
    auto x = q.Insert(Uniform01(rng), Uniform01(rng), tag++);
    q.Erase(x);
  }
  state.SetItemsProcessed(state.iterations() * 2);  // two operations per iteration
}

void BM_KineticUpdate(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Rng rng = MakeRng(2, "bench");
  KineticMaxQueue q;
  std::vector<KineticMaxQueue::Handle> h;
  Fill(q, rng, n, &h);
  size_t i = 0;
  for (auto _ : state) {
    q.Update(h[i], Uniform01(rng), Uniform01(rng));
    if (++i == h.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_KineticBestAdvancing(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Rng rng = MakeRng(3, "bench");
  KineticMaxQueue q;
  std::vector<KineticMaxQueue::Handle> h;
  Fill(q, rng, n, &h);
  double x = 1;
  for (auto _ : state) {
    x *= 1.0001;  // time advances: some certificates fail
    benchmark::DoNotOptimize(q.Best(x));
    if (x > 1e6) {
      state.PauseTiming();
      q.Rescale(x, 1.0);
      x = 1;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}

const ProfileSuite& Bimodal() {
  static const ProfileSuite* s = [] {
    auto r = LoadSuite(std::string(SLOSERVE_SOURCE_DIR) +
                       "/experiments/orloj/profiles/bimodal-std1.prof");
    if (!r.ok()) std::abort();
    return new ProfileSuite(*std::move(r));
  }();
  return *s;
}

// ORLOJ (fixed selection) initialised for one worker with every variant loaded.
std::unique_ptr<BatchingPolicy> SingleWorkerOrloj(const ProfileSuite& suite,
                                                  std::map<std::string, std::string> options) {
  PolicyParams params("bench", std::move(options));
  auto policy = OrlojBatching::Create(params, FixedSelection::Create(params).value()).value();
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.workers.resize(1);
  ctx.workers[0].residency.assign(suite.variants().size(), Residency::kReady);
  if (!policy->Init(ctx).ok()) std::abort();
  return policy;
}

void BM_OrlojDecision(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const ProfileSuite& suite = Bimodal();
  auto policy = SingleWorkerOrloj(suite, {});
  std::vector<Query> table;
  std::deque<uint32_t> slots;
  Rng rng = MakeRng(4, "bench");
  TimePoint now = kTimeZero;
  auto arrive = [&] {
    Query q;
    q.id = table.size() + 1;
    q.app = static_cast<AppId>(rng() % 2);
    q.arrival = now;
    q.deadline = now + Millis(2000 + static_cast<int64_t>(rng() % 60000));
    table.push_back(q);
    const uint32_t slot = static_cast<uint32_t>(table.size() - 1);
    auto it = std::upper_bound(slots.begin(), slots.end(), slot, [&](uint32_t a, uint32_t b) {
      return table[a].deadline < table[b].deadline ||
             (table[a].deadline == table[b].deadline && table[a].id < table[b].id);
    });
    slots.insert(it, slot);
    policy->OnArrival(q, now);
  };
  for (int i = 0; i < n; ++i) arrive();
  WorkerView w;
  BatchDecision d;
  policy->NextBatch(w, QueueView(&slots, &table), now, &d);  // warm: builds the tables
  size_t decided = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<uint32_t> gone = d.take;
    gone.insert(gone.end(), d.drop.begin(), d.drop.end());
    gone.insert(gone.end(), d.reject.begin(), d.reject.end());
    std::sort(gone.rbegin(), gone.rend());
    for (uint32_t p : gone) slots.erase(slots.begin() + p);
    now += Millis(1);
    while (slots.size() < static_cast<size_t>(n)) arrive();
    QueueView view(&slots, &table);
    state.ResumeTiming();
    policy->NextBatch(w, view, now, &d);
    decided += d.take.size();
  }
  state.counters["batch"] =
      benchmark::Counter(static_cast<double>(decided), benchmark::Counter::kAvgIterations);
  state.counters["pending"] = static_cast<double>(slots.size());
}

// One online-profile refresh that publishes (a 1 µs window and refresh, one sample
// minimum: every call rebuilds): a batch of 16 recorded, the profilers' histograms, the
// merged table and the score table of the bimodal suite (batch sizes 1-16). With n > 0
// pending, also the worker's next decision, which re-registers all n with the new table.
void BM_OrlojProfileRebuild(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const ProfileSuite& suite = Bimodal();
  auto policy = SingleWorkerOrloj(suite, {{"online_profile", "true"},
                                          {"profile_refresh_s", "1e-6"},
                                          {"profile_window_s", "1e-6"},
                                          {"profile_min_samples", "1"}});
  Rng rng = MakeRng(5, "bench");
  std::vector<Query> table;
  std::deque<uint32_t> slots;
  for (int i = 0; i < std::max(n, 1); ++i) {  // deadline order = id order
    Query q;
    q.id = static_cast<QueryId>(i + 1);
    q.app = static_cast<AppId>(rng() % 2);
    q.deadline = kTimeZero + Seconds(60) + Millis(i);
    table.push_back(q);
    slots.push_back(static_cast<uint32_t>(i));
  }
  WorkerView w;
  BatchDecision d;
  policy->NextBatch(w, QueueView(&slots, &table), kTimeZero, &d);  // builds the score table
  std::vector<CompletedRequest> reqs(16);
  TimePoint now = kTimeZero;
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < reqs.size(); ++i) {
      reqs[i].app = static_cast<AppId>(i % 2);
      reqs[i].solo = Millis(i % 2 ? 90 : 30) + Micros(static_cast<int64_t>(rng() % 20000));
    }
    now += Millis(1);
    BatchCompletion c;
    c.now = now;
    c.variant = 0;
    c.requests = reqs;
    state.ResumeTiming();
    policy->OnBatchComplete(c);
    // The queue is unchanged between iterations: the rebuild makes the policy start over.
    if (n > 0) policy->NextBatch(w, QueueView(&slots, &table), now, &d);
  }
  const auto* orloj = static_cast<const OrlojBatching*>(policy.get());
  state.counters["rebuilds"] = benchmark::Counter(static_cast<double>(orloj->profile_rebuilds()),
                                                  benchmark::Counter::kAvgIterations);
  state.counters["pending"] = n;
}

BENCHMARK(BM_KineticInsertErase)->RangeMultiplier(10)->Range(10, 100000);
BENCHMARK(BM_KineticUpdate)->RangeMultiplier(10)->Range(10, 100000);
BENCHMARK(BM_KineticBestAdvancing)->RangeMultiplier(10)->Range(10, 100000);
BENCHMARK(BM_OrlojDecision)->Arg(1000)->Arg(10000);
BENCHMARK(BM_OrlojProfileRebuild)->Arg(0)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
