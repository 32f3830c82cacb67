#pragma once
// Metrics recorded by the engine, identically for sim and serve: aggregates over the
// run and a per-interval time series. Definitions (docs/metrics.md):
//   accuracy        mean accuracy (%) of the variants that answered queries meeting the SLO
//   violation_rate  (late + dropped) / arrived
//   finish_rate     met SLO / arrived
//   throughput_qps  completed / elapsed
//   goodput_qps     met SLO / elapsed
//   shed            refused by admission (kShed, kQueueFull): part of `dropped`, never late
//   admitted        arrived - shed; admitted_met_rate = met / admitted
//   expired         dropped before running, deadline no longer reachable (part of dropped)
//   latency pXX     arrival -> completion of completed queries (dropped excluded), from a
//                   bounded histogram (exact below 2 ms, 0.1% buckets above)
//   phases          each completed query's latency in three parts, each with its own
//                   p50/p99/mean (MetricsCollector::Phases; not on every summary):
//                   queue (arrival -> its batch formed), exec (the executor's measure of the
//                   batch, ActionResult end - begin) and handoff (the rest of the batch's
//                   service: the action's way to the executor, the result's way back to
//                   the engine, a cold start the batch waited for; 0 in sim)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/time.h"
#include "sloserve/engine/latency_histogram.h"
#include "sloserve/engine/query_record.h"

namespace sloserve {

struct IntervalStats {
  int64_t arrived = 0;
  int64_t completed = 0;
  int64_t met = 0;
  int64_t late = 0;
  int64_t dropped = 0;
  int64_t shed = 0;         // of dropped: refused by admission
  int64_t expired = 0;      // of dropped: deadline passed before it ran
  int64_t cancelled = 0;    // of dropped: its client went away
  double accuracy_sum = 0;  // over met queries
  double core_seconds = 0;  // cores of the active and starting workers x time in the interval
};

// One priority class's outcome (docs/admission.md): level 1 = highest.
struct PriorityStats {
  int32_t level = 1;
  int64_t arrived = 0, shed = 0, met = 0;
  int64_t queue_full = 0;        // of shed: refused because a queue was at its bound
  double shed_rate = 0;          // shed / arrived
  double admitted_met_rate = 0;  // met / (arrived - shed)
};

// One phase of the completed queries' latencies (see "phases" above), in ms.
struct PhaseStats {
  double p50_ms = 0, p99_ms = 0, mean_ms = 0, max_ms = 0;
};
struct LatencyPhases {
  int64_t count = 0;  // completed queries whose executor reported its execution time
  PhaseStats queue, exec, handoff;
};

struct MetricsSummary {
  int64_t arrived = 0;
  int64_t completed = 0;
  int64_t met = 0;
  int64_t late = 0;
  int64_t dropped = 0;
  int64_t shed = 0, expired = 0, cancelled = 0, admitted = 0;  // see the header comment
  // Requests refused as malformed before they queued (serve: more rows than any variant
  // finishes within the SLO); not arrivals, so not SLO misses.
  int64_t bad_requests = 0;
  double goodput_qps = 0;
  double admitted_met_rate = 0;
  double accuracy = 0;
  double violation_rate = 0;
  double finish_rate = 0;
  double throughput_qps = 0;
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  double mean_queue_ms = 0;
  double mean_batch_size = 0;
  double elapsed_s = 0;
  double cost_per_hour = 0;  // mean price of the active workers over the run
  double cost_usd = 0;       // instance-hours x price over the elapsed time
  double core_seconds = 0;   // cores x elapsed
  double utilization = 0;    // busy time / (workers x elapsed)
  int64_t cold_starts = 0;   // variant loads on a worker (a new worker's first ones too)
  int64_t reloads = 0;       // of those, of a variant the worker had loaded before
  // Batches that waited for their variant's load: the cold starts a query waited for (the
  // other loads were ahead of need: a plan's preloads, prefetches).
  int64_t cold_starts_waited = 0;
  int64_t batches = 0;
  // Per priority level, when queries of more than one level ended (else empty).
  std::vector<PriorityStats> priorities;
  // Filled only where asked for (a run's final summary: sim's rows, serve's --json), not
  // in the summaries a live server publishes after every step; count 0 = not filled.
  LatencyPhases phases;
};

// The rates a summary derives from its counts (arrived ... cancelled set): admitted,
// accuracy (from the met queries' summed accuracy), violation/finish rates, elapsed time
// to `end`, throughput, goodput and the admitted queries' met rate. One definition for the
// pool's summary and each model's (model_metrics.h).
void FillRates(double accuracy_sum, TimePoint end, MetricsSummary* out);

class MetricsCollector {
 public:
  // `phases`: also keep the latency phases (Phases(); three more histograms, ~600 KB).
  explicit MetricsCollector(Duration interval = Seconds(1), bool phases = false)
      : interval_(interval), phases_(phases ? std::make_unique<PhaseData>() : nullptr) {}

  void OnArrival(TimePoint now);
  void OnDone(const QueryRecord& r, double accuracy);
  void OnBatch(int queries, Duration busy) {
    ++batches_;
    batch_queries_ += queries;
    busy_us_ += busy.count();
  }
  // A variant load on a worker; `reload` if that worker had loaded it before.
  void OnColdStart(bool reload) {
    ++cold_starts_;
    if (reload) ++reloads_;
  }
  // A batch formed on a worker that does not hold its variant yet: it waits for the load.
  void OnLoadWaited() { ++cold_starts_waited_; }
  // `cores` were provisioned over [from, to): spread over the intervals it covers.
  void OnCoreTime(TimePoint from, TimePoint to, int cores);

  // Aggregates over [0, end]; cost fields are left for the engine to fill.
  MetricsSummary Summarize(TimePoint end, int workers) const;
  // Levels 1..`levels` (every one, also those no query ended in: /metrics exports a fixed
  // label set), counts and rates as in MetricsSummary::priorities.
  std::vector<PriorityStats> PriorityCounts(int32_t levels) const;
  // The completed queries' latencies in phases (header comment), over the queries whose
  // executor measured its execution; count 0 when not kept.
  LatencyPhases Phases() const;
  // The intervals from 0 to the last arrival's, with their core_seconds.
  std::vector<IntervalStats> series() const;
  Duration interval() const { return interval_; }

 private:
  IntervalStats& Slot(TimePoint t);

  Duration interval_;
  IntervalStats total_;
  std::vector<PriorityStats> by_priority_;  // [level], counts only
  std::vector<IntervalStats> series_;
  std::vector<double> core_seconds_;  // per interval; may run past the last arrival
  LatencyHistogram latency_;
  // Phases (the queries with an exec_time): queue, exec, handoff, and their sums (µs).
  struct PhaseData {
    LatencyHistogram hist[3];
    int64_t sum_us[3] = {0, 0, 0};
  };
  std::unique_ptr<PhaseData> phases_;
  int64_t latency_us_sum_ = 0;
  int64_t queue_us_sum_ = 0;
  int64_t batches_ = 0;
  int64_t batch_queries_ = 0;
  int64_t busy_us_ = 0;
  int64_t cold_starts_ = 0;
  int64_t cold_starts_waited_ = 0;
  int64_t reloads_ = 0;
};

}  // namespace sloserve
