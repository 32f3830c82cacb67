#pragma once
// Per-model metrics of a multi-model deployment (docs/multi-model.md, "Engine"): the
// pool's totals stay in MetricsCollector; this keeps, per model, the counts and means a
// MetricsSummary reports, with the same definitions (metrics.h), in a few KB per model so
// a thousand models stay cheap. Latency quantiles come from a coarse log histogram (32
// buckets per octave, relative error of a reported quantile about 1%; exact below 32 µs).
// Cost and core fields are those of the workers dedicated to the model (WorkerView::model;
// 0 when none is: a shared pool's cost is the pool's); `utilization` is the model's share:
// the busy time of its batches / (workers x elapsed), so the models' shares sum to the
// pool's.
#include <cstdint>
#include <vector>

#include "sloserve/core/time.h"
#include "sloserve/engine/metrics.h"
#include "sloserve/engine/query_record.h"

namespace sloserve {

class ModelMetrics {
 public:
  void OnArrival() { ++arrived_; }
  void OnDone(const QueryRecord& r, double accuracy);
  void OnBatch(int queries, Duration busy) {
    ++batches_;
    batch_queries_ += queries;
    busy_us_ += busy.count();
  }
  void OnColdStart(bool reload) {
    ++cold_starts_;
    if (reload) ++reloads_;
  }
  void OnLoadWaited() { ++cold_starts_waited_; }  // as MetricsCollector's
  void OnCost(double usd, double core_seconds) {
    cost_usd_ += usd;
    core_seconds_ += core_seconds;
  }
  MetricsSummary Summarize(TimePoint end, int workers) const;

 private:
  double QuantileUs(double q) const;
  double OrderStatistic(int64_t k) const;

  int64_t arrived_ = 0, completed_ = 0, met_ = 0, late_ = 0, dropped_ = 0;
  int64_t shed_ = 0, expired_ = 0, cancelled_ = 0;
  double accuracy_sum_ = 0;
  int64_t latency_us_sum_ = 0, queue_us_sum_ = 0, max_us_ = 0;
  int64_t batches_ = 0, batch_queries_ = 0, busy_us_ = 0, cold_starts_ = 0;
  int64_t reloads_ = 0, cold_starts_waited_ = 0;
  double cost_usd_ = 0, core_seconds_ = 0;
  std::vector<uint32_t> buckets_;  // grown to the largest bucket seen
};

}  // namespace sloserve
