#include "sloserve/engine/metrics.h"

#include <algorithm>
#include <cmath>

namespace sloserve {

const char* DropReasonName(DropReason r) {
  switch (r) {
    case DropReason::kNone:
      return "none";
    case DropReason::kQueueFull:
      return "queue_full";
    case DropReason::kPolicy:
      return "policy";
    case DropReason::kUnservable:
      return "unservable";
    case DropReason::kShutdown:
      return "shutdown";
    case DropReason::kInternal:
      return "internal";
    case DropReason::kExecutorError:
      return "executor_error";
    case DropReason::kExpired:
      return "expired";
    case DropReason::kShed:
      return "shed";
    case DropReason::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

IntervalStats& MetricsCollector::Slot(TimePoint t) {
  int64_t us = t.time_since_epoch().count();
  size_t i = us <= 0 ? 0 : static_cast<size_t>(us / interval_.count());
  if (i >= series_.size()) series_.resize(i + 1);
  return series_[i];
}

void MetricsCollector::OnCoreTime(TimePoint from, TimePoint to, int cores) {
  if (cores <= 0) return;
  while (from < to) {
    const int64_t us = from.time_since_epoch().count();
    const int64_t slot_end = (std::max<int64_t>(us, 0) / interval_.count() + 1) * interval_.count();
    const TimePoint end = std::min(to, TimePoint(Duration(slot_end)));
    const size_t slot = static_cast<size_t>(std::max<int64_t>(us, 0) / interval_.count());
    if (slot >= core_seconds_.size()) core_seconds_.resize(slot + 1, 0.0);
    core_seconds_[slot] += cores * ToSeconds(end - from);
    from = end;
  }
}

std::vector<IntervalStats> MetricsCollector::series() const {
  std::vector<IntervalStats> out = series_;
  for (size_t i = 0; i < out.size() && i < core_seconds_.size(); ++i)
    out[i].core_seconds = core_seconds_[i];
  return out;
}

void MetricsCollector::OnArrival(TimePoint now) {
  ++total_.arrived;
  ++Slot(now).arrived;
}

void MetricsCollector::OnDone(const QueryRecord& r, double accuracy) {
  // Outcomes are attributed to the interval the query arrived in.
  IntervalStats& s = Slot(r.arrival);
  const size_t level = static_cast<size_t>(std::max(r.priority, 0));
  if (level >= by_priority_.size()) by_priority_.resize(level + 1);
  PriorityStats& p = by_priority_[level];
  ++p.arrived;
  if (r.dropped && (r.drop_reason == DropReason::kShed || r.drop_reason == DropReason::kQueueFull))
    ++p.shed;
  if (r.dropped && r.drop_reason == DropReason::kQueueFull) ++p.queue_full;
  if (!r.dropped && r.met_slo) ++p.met;
  for (IntervalStats* st : {&s, &total_}) {
    if (r.dropped) {
      ++st->dropped;
      // Overload shedding is counted apart from SLO misses (docs/admission.md).
      if (r.drop_reason == DropReason::kShed || r.drop_reason == DropReason::kQueueFull) ++st->shed;
      if (r.drop_reason == DropReason::kExpired) ++st->expired;
      if (r.drop_reason == DropReason::kCancelled) ++st->cancelled;
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
    latency_.Add(r.latency().count());
    latency_us_sum_ += r.latency().count();
    queue_us_sum_ += r.queue_time().count();
    if (phases_ && r.exec_time >= Duration(0)) {
      const int64_t us[3] = {r.queue_time().count(), r.exec_time.count(),
                             (r.service_time() - r.exec_time).count()};
      for (int i = 0; i < 3; ++i) {
        phases_->hist[i].Add(us[i]);
        phases_->sum_us[i] += us[i];
      }
    }
  }
}

LatencyPhases MetricsCollector::Phases() const {
  LatencyPhases out;
  if (!phases_ || phases_->hist[0].count() == 0) return out;
  out.count = phases_->hist[0].count();
  PhaseStats* stats[3] = {&out.queue, &out.exec, &out.handoff};
  for (int i = 0; i < 3; ++i) {
    const LatencyHistogram& h = phases_->hist[i];
    stats[i]->p50_ms = h.QuantileUs(0.50) * 1e-3;
    stats[i]->p99_ms = h.QuantileUs(0.99) * 1e-3;
    stats[i]->mean_ms =
        static_cast<double>(phases_->sum_us[i]) / static_cast<double>(out.count) * 1e-3;
    stats[i]->max_ms = static_cast<double>(h.max_us()) * 1e-3;
  }
  return out;
}

void FillRates(double accuracy_sum, TimePoint end, MetricsSummary* out) {
  MetricsSummary& m = *out;
  m.admitted = m.arrived - m.shed;
  m.accuracy = m.met > 0 ? accuracy_sum / static_cast<double>(m.met) : 0;
  if (m.arrived > 0) {
    m.violation_rate = static_cast<double>(m.late + m.dropped) / static_cast<double>(m.arrived);
    m.finish_rate = static_cast<double>(m.met) / static_cast<double>(m.arrived);
  }
  m.elapsed_s = std::max(0.0, ToSeconds(end.time_since_epoch()));
  if (m.elapsed_s > 0) {
    m.throughput_qps = static_cast<double>(m.completed) / m.elapsed_s;
    m.goodput_qps = static_cast<double>(m.met) / m.elapsed_s;
  }
  if (m.admitted > 0)
    m.admitted_met_rate = static_cast<double>(m.met) / static_cast<double>(m.admitted);
}

MetricsSummary MetricsCollector::Summarize(TimePoint end, int workers) const {
  MetricsSummary m;
  m.arrived = total_.arrived;
  m.completed = total_.completed;
  m.met = total_.met;
  m.late = total_.late;
  m.dropped = total_.dropped;
  m.shed = total_.shed;
  m.expired = total_.expired;
  m.cancelled = total_.cancelled;
  FillRates(total_.accuracy_sum, end, &m);
  m.p50_ms = latency_.QuantileUs(0.50) * 1e-3;
  m.p95_ms = latency_.QuantileUs(0.95) * 1e-3;
  m.p99_ms = latency_.QuantileUs(0.99) * 1e-3;
  if (latency_.count() > 0) {
    const double n = static_cast<double>(latency_.count());
    m.max_ms = static_cast<double>(latency_.max_us()) * 1e-3;
    m.mean_ms = static_cast<double>(latency_us_sum_) / n * 1e-3;
    m.mean_queue_ms = static_cast<double>(queue_us_sum_) / n * 1e-3;
  }
  m.batches = batches_;
  m.mean_batch_size =
      batches_ > 0 ? static_cast<double>(batch_queries_) / static_cast<double>(batches_) : 0;
  if (workers > 0 && m.elapsed_s > 0) {
    m.utilization = static_cast<double>(busy_us_) * 1e-6 / (workers * m.elapsed_s);
  }
  m.cold_starts = cold_starts_;
  m.reloads = reloads_;
  m.cold_starts_waited = cold_starts_waited_;
  int levels_seen = 0;
  for (const PriorityStats& p : by_priority_) levels_seen += p.arrived > 0;
  if (levels_seen > 1) {
    for (const PriorityStats& p : PriorityCounts(static_cast<int32_t>(by_priority_.size()) - 1))
      if (p.arrived > 0) m.priorities.push_back(p);
  }
  return m;
}

std::vector<PriorityStats> MetricsCollector::PriorityCounts(int32_t levels) const {
  std::vector<PriorityStats> out;
  for (int32_t level = 1; level <= levels; ++level) {
    PriorityStats p;
    if (static_cast<size_t>(level) < by_priority_.size())
      p = by_priority_[static_cast<size_t>(level)];
    p.level = level;
    if (p.arrived > 0) p.shed_rate = static_cast<double>(p.shed) / static_cast<double>(p.arrived);
    if (p.arrived > p.shed)
      p.admitted_met_rate = static_cast<double>(p.met) / static_cast<double>(p.arrived - p.shed);
    out.push_back(p);
  }
  return out;
}

}  // namespace sloserve
