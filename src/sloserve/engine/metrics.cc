#include "sloserve/engine/metrics.h"

#include <algorithm>
#include <cmath>

namespace sloserve {

const char* DropReasonName(DropReason r) {
  switch (r) {
    case DropReason::kNone: return "none";
    case DropReason::kQueueFull: return "queue_full";
    case DropReason::kPolicy: return "policy";
    case DropReason::kUnservable: return "unservable";
    case DropReason::kShutdown: return "shutdown";
  }
  return "unknown";
}

IntervalStats& MetricsCollector::Slot(TimePoint t) {
  int64_t us = t.time_since_epoch().count();
  size_t i = us <= 0 ? 0 : static_cast<size_t>(us / interval_.count());
  if (i >= series_.size()) series_.resize(i + 1);
  return series_[i];
}

void MetricsCollector::OnArrival(TimePoint now) {
  ++total_.arrived;
  ++Slot(now).arrived;
}

void MetricsCollector::OnDone(const QueryRecord& r, double accuracy) {
  // Outcomes are attributed to the interval the query arrived in.
  IntervalStats& s = Slot(r.arrival);
  for (IntervalStats* st : {&s, &total_}) {
    if (r.dropped) {
      ++st->dropped;
      continue;
    }
    ++st->completed;
    if (r.met_slo) {
      ++st->met;
      st->accuracy_sum += accuracy;
    } else {
      ++st->late;
    }
  }
  if (!r.dropped) {
    latencies_us_.push_back(r.latency().count());
    queue_us_sum_ += r.queue_time().count();
  }
}

namespace {
// Quantile by linear interpolation between order statistics (numpy's default).
double QuantileMs(std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  double a = static_cast<double>(v[lo]);
  double b = a;
  if (hi != lo) b = static_cast<double>(*std::min_element(v.begin() + lo + 1, v.end()));
  return (a + (b - a) * (pos - static_cast<double>(lo))) * 1e-3;
}
}  // namespace

MetricsSummary MetricsCollector::Summarize(TimePoint end, int workers) const {
  MetricsSummary m;
  m.arrived = total_.arrived;
  m.completed = total_.completed;
  m.met = total_.met;
  m.late = total_.late;
  m.dropped = total_.dropped;
  m.accuracy = m.met > 0 ? total_.accuracy_sum / static_cast<double>(m.met) : 0;
  if (m.arrived > 0) {
    m.violation_rate = static_cast<double>(m.late + m.dropped) / static_cast<double>(m.arrived);
    m.finish_rate = static_cast<double>(m.met) / static_cast<double>(m.arrived);
  }
  m.elapsed_s = std::max(0.0, ToSeconds(end.time_since_epoch()));
  if (m.elapsed_s > 0) m.throughput_qps = static_cast<double>(m.completed) / m.elapsed_s;
  std::vector<int64_t> lat = latencies_us_;
  m.p50_ms = QuantileMs(lat, 0.50);
  m.p95_ms = QuantileMs(lat, 0.95);
  m.p99_ms = QuantileMs(lat, 0.99);
  if (!lat.empty()) {
    m.max_ms = static_cast<double>(*std::max_element(lat.begin(), lat.end())) * 1e-3;
    double sum = 0;
    for (int64_t x : lat) sum += static_cast<double>(x);
    m.mean_ms = sum / static_cast<double>(lat.size()) * 1e-3;
    m.mean_queue_ms = static_cast<double>(queue_us_sum_) / static_cast<double>(lat.size()) * 1e-3;
  }
  m.batches = batches_;
  m.mean_batch_size = batches_ > 0 ? static_cast<double>(batch_queries_) / static_cast<double>(batches_) : 0;
  if (workers > 0 && m.elapsed_s > 0) {
    m.utilization = static_cast<double>(busy_us_) * 1e-6 / (workers * m.elapsed_s);
  }
  m.cold_starts = cold_starts_;
  return m;
}

}  // namespace sloserve
