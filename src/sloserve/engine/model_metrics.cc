#include "sloserve/engine/model_metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace sloserve {
namespace {

constexpr int kSubBits = 5;  // 32 buckets per octave
constexpr int64_t kSub = int64_t{1} << kSubBits;

// Values below kSub have a bucket each; above, a bucket is (octave, top kSubBits bits of
// the mantissa): about 2.2% wide.
size_t Bucket(int64_t us) {
  if (us < kSub) return static_cast<size_t>(std::max<int64_t>(us, 0));
  const int octave = std::bit_width(static_cast<uint64_t>(us)) - 1;  // >= kSubBits
  const int64_t mantissa = (us >> (octave - kSubBits)) - kSub;       // [0, kSub)
  return static_cast<size_t>(kSub + (octave - kSubBits) * kSub + mantissa);
}

// The middle of the bucket's range [lo, hi).
double Representative(size_t b) {
  if (b < static_cast<size_t>(kSub)) return static_cast<double>(b);
  const int64_t i = static_cast<int64_t>(b) - kSub;
  const int shift = static_cast<int>(i / kSub);
  const double lo = static_cast<double>((kSub + i % kSub) << shift);
  const double width = static_cast<double>(int64_t{1} << shift);
  return lo + (width - 1) / 2;
}

}  // namespace

void ModelMetrics::OnDone(const QueryRecord& r, double accuracy) {
  if (r.dropped) {
    ++dropped_;
    if (r.drop_reason == DropReason::kShed || r.drop_reason == DropReason::kQueueFull) ++shed_;
    if (r.drop_reason == DropReason::kExpired) ++expired_;
    if (r.drop_reason == DropReason::kCancelled) ++cancelled_;
    return;
  }
  ++completed_;
  if (r.met_slo) {
    ++met_;
    accuracy_sum_ += accuracy;
  } else {
    ++late_;
  }
  const int64_t us = r.latency().count();
  latency_us_sum_ += us;
  queue_us_sum_ += r.queue_time().count();
  max_us_ = std::max(max_us_, us);
  const size_t b = Bucket(us);
  if (b >= buckets_.size()) buckets_.resize(b + 1, 0);
  ++buckets_[b];
}

double ModelMetrics::OrderStatistic(int64_t k) const {
  int64_t seen = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen > k) return std::min(Representative(b), static_cast<double>(max_us_));
  }
  return static_cast<double>(max_us_);
}

double ModelMetrics::QuantileUs(double q) const {
  // As LatencyHistogram: linear interpolation between order statistics.
  if (completed_ == 0) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(completed_ - 1);
  const int64_t lo = static_cast<int64_t>(std::floor(pos));
  const double a = OrderStatistic(lo);
  if (lo + 1 >= completed_) return a;
  const double b = OrderStatistic(lo + 1);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

MetricsSummary ModelMetrics::Summarize(TimePoint end, int workers) const {
  MetricsSummary m;
  m.arrived = arrived_;
  m.completed = completed_;
  m.met = met_;
  m.late = late_;
  m.dropped = dropped_;
  m.shed = shed_;
  m.expired = expired_;
  m.cancelled = cancelled_;
  FillRates(accuracy_sum_, end, &m);
  m.p50_ms = QuantileUs(0.50) * 1e-3;
  m.p95_ms = QuantileUs(0.95) * 1e-3;
  m.p99_ms = QuantileUs(0.99) * 1e-3;
  if (completed_ > 0) {
    const double n = static_cast<double>(completed_);
    m.max_ms = static_cast<double>(max_us_) * 1e-3;
    m.mean_ms = static_cast<double>(latency_us_sum_) / n * 1e-3;
    m.mean_queue_ms = static_cast<double>(queue_us_sum_) / n * 1e-3;
  }
  m.batches = batches_;
  m.mean_batch_size =
      batches_ > 0 ? static_cast<double>(batch_queries_) / static_cast<double>(batches_) : 0;
  if (workers > 0 && m.elapsed_s > 0)
    m.utilization = static_cast<double>(busy_us_) * 1e-6 / (workers * m.elapsed_s);
  m.cold_starts = cold_starts_;
  m.reloads = reloads_;
  m.cold_starts_waited = cold_starts_waited_;
  m.cost_usd = cost_usd_;
  m.core_seconds = core_seconds_;
  return m;
}

}  // namespace sloserve
