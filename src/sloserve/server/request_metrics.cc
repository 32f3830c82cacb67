#include "sloserve/server/request_metrics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "sloserve/server/json_util.h"
#include "sloserve/server/prometheus_text.h"

namespace sloserve {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

using Rows = OutcomeCounters;
constexpr size_t kRowInvalid = OutcomeCounters::kRowInvalid;

size_t RowOf(const InferOutcome& o) {
  if (o.status.ok()) return o.met_slo ? 0 : 1;
  if (o.reason != nullptr) {
    for (size_t i = 2; i <= 10; ++i) {
      if (std::string_view(Rows::kRows[i].reason) == o.reason) return i;
    }
  }
  switch (o.status.code()) {  // backends that do not say why
    case StatusCode::kResourceExhausted:
      return 3;  // queue_full
    case StatusCode::kDeadlineExceeded:
      return 2;  // policy
    case StatusCode::kFailedPrecondition:
      return 9;  // unservable
    case StatusCode::kInvalidArgument:
      return kRowInvalid;  // e.g. more rows than the model serves
    case StatusCode::kUnavailable:
      return 11;
    default:
      return 12;
  }
}

// key="value", the value escaped as Prometheus' text format says.
void AppendLabel(std::string& out, const char* key, std::string_view value) {
  out += key;
  out += "=\"";
  AppendPrometheusLabelValue(out, value);
  out += '"';
}

}  // namespace

// Named (not anonymous) namespace: Series holds Histograms, and in a unity build this
// file is included into another, where a member of anonymous type would warn.
namespace request_metrics_internal {

struct Histogram {
  explicit Histogram(const std::vector<int64_t>* bounds)
      : bounds_us(bounds), counts(new std::atomic<int64_t>[bounds->size() + 1]) {
    for (size_t b = 0; b <= bounds->size(); ++b) counts[b].store(0, kRelaxed);
  }
  const std::vector<int64_t>* bounds_us;           // the RequestMetrics' (outlives this)
  std::unique_ptr<std::atomic<int64_t>[]> counts;  // one per bound, then +Inf
  std::atomic<int64_t> sum_us{0};

  void Add(Duration d) {
    const int64_t us = d.count();
    const auto it = std::lower_bound(bounds_us->begin(), bounds_us->end(), us);
    counts[static_cast<size_t>(it - bounds_us->begin())].fetch_add(1, kRelaxed);
    sum_us.fetch_add(us, kRelaxed);
  }
};

}  // namespace request_metrics_internal
using request_metrics_internal::Histogram;

struct RequestMetrics::Series {
  Series(size_t m, std::string_view v, std::string_view w, uint64_t h,
         const std::vector<int64_t>* bounds)
      : model(m), variant(v), worker(w), hash(h), request(bounds), queue(bounds), compute(bounds) {}
  const size_t model;
  const std::string variant;
  const std::string worker;
  const uint64_t hash;
  Histogram request, queue, compute;
};

struct RequestMetrics::Model {
  Model(size_t m, const std::vector<int64_t>* bounds) : overflow(m, "other", "other", 0, bounds) {}
  Series overflow;  // (variant, worker) pairs beyond kMaxSeries
  // Triton statistics (success = answered 200; fail = any other answer).
  std::atomic<int64_t> success_ns{0}, fail_count{0}, fail_ns{0}, queue_ns{0}, compute_ns{0};
  std::atomic<int64_t> success_count{0}, rows{0}, last_ms{0};
};

std::vector<double> LatencyBucketsForSlos(const std::vector<Duration>& slos) {
  std::vector<double> all(RequestMetrics::kDefaultBuckets.begin(),
                          RequestMetrics::kDefaultBuckets.end());
  for (Duration slo : slos) {
    if (slo.count() <= 0) continue;
    for (double f : {0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0})
      all.push_back(ToSeconds(slo) * f);
  }
  std::sort(all.begin(), all.end());
  std::vector<double> out;
  for (double b : all) {
    // Round to the microsecond the histogram compares in; drop near-duplicates.
    b = std::round(b * 1e6) / 1e6;
    if (b <= 0 || (!out.empty() && b < out.back() * 1.02)) continue;
    out.push_back(b);
  }
  // Too many SLOs: thin the list evenly, keeping its ends.
  while (out.size() > RequestMetrics::kMaxBuckets) {
    std::vector<double> thin;
    for (size_t i = 0; i < out.size(); ++i)
      if (i % 2 == 0 || i + 1 == out.size()) thin.push_back(out[i]);
    out = std::move(thin);
  }
  return out;
}

Status CheckLatencyBuckets(const std::vector<double>& buckets) {
  if (buckets.empty() || buckets.size() > RequestMetrics::kMaxBuckets) {
    return InvalidArgumentError("latency buckets: give 1.." +
                                std::to_string(RequestMetrics::kMaxBuckets) + " bounds, got " +
                                std::to_string(buckets.size()));
  }
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (!std::isfinite(buckets[i]) || buckets[i] <= 0 || buckets[i] > 86400) {
      return InvalidArgumentError(
          "latency buckets: each bound must be in (0, 86400] seconds, got " +
          std::to_string(buckets[i]));
    }
    if (i > 0 && buckets[i] <= buckets[i - 1]) {
      return InvalidArgumentError("latency buckets: bounds must be strictly ascending (" +
                                  std::to_string(buckets[i - 1]) + " then " +
                                  std::to_string(buckets[i]) + ")");
    }
  }
  return OkStatus();
}

namespace {

std::vector<std::string> MetricModelNames(const std::vector<TaskInfo>& models) {
  std::vector<std::string> names;
  for (const TaskInfo& t : models) names.push_back(t.name);
  return names;
}

std::vector<Duration> MetricModelSlos(const std::vector<TaskInfo>& models) {
  std::vector<Duration> slos;
  for (const TaskInfo& t : models) slos.push_back(t.default_slo);
  return slos;
}

std::vector<std::vector<std::string>> MetricModelVariants(const std::vector<TaskInfo>& models) {
  std::vector<std::vector<std::string>> variants;
  for (const TaskInfo& t : models) variants.push_back(t.variants);
  return variants;
}

}  // namespace

RequestMetrics::RequestMetrics(std::vector<std::string> models, std::vector<double> buckets)
    : RequestMetrics(std::move(models), {}, {}, std::move(buckets)) {}

RequestMetrics::RequestMetrics(const std::vector<TaskInfo>& models, std::vector<double> buckets)
    : RequestMetrics(MetricModelNames(models), MetricModelSlos(models), MetricModelVariants(models),
                     std::move(buckets)) {}

RequestMetrics::RequestMetrics(std::vector<std::string> models, std::vector<Duration> slos,
                               std::vector<std::vector<std::string>> variants,
                               std::vector<double> buckets)
    : models_(std::move(models)),
      buckets_(buckets.empty() ? std::vector<double>(kDefaultBuckets.begin(), kDefaultBuckets.end())
                               : std::move(buckets)),
      outcomes_(std::make_unique<OutcomeCounters>(models_, slos, variants)) {
  for (double b : buckets_) bounds_us_.push_back(static_cast<int64_t>(std::llround(b * 1e6)));
  for (size_t m = 0; m < models_.size(); ++m)
    by_model_.push_back(std::make_unique<Model>(m, &bounds_us_));
}

std::optional<size_t> RequestMetrics::IndexOf(std::string_view model) const {
  const auto it = std::find(models_.begin(), models_.end(), model);
  if (it == models_.end()) return std::nullopt;
  return static_cast<size_t>(it - models_.begin());
}

RequestMetrics::~RequestMetrics() {
  for (auto& slot : table_) delete slot.load();
}

RequestMetrics::Series* RequestMetrics::FindOrAddSeries(size_t model, std::string_view variant,
                                                        std::string_view worker) {
  const uint64_t h =
      std::hash<std::string_view>{}(variant)*31 + std::hash<std::string_view>{}(worker)*7 + model;
  constexpr size_t kMask = 2 * kMaxSeries - 1;
  for (size_t probe = 0, i = h & kMask; probe <= kMask; ++probe, i = (i + 1) & kMask) {
    Series* s = table_[i].load(std::memory_order_acquire);
    if (s == nullptr) {
      if (series_count_.fetch_add(1, kRelaxed) >= kMaxSeries) {
        series_count_.fetch_sub(1, kRelaxed);
        return &by_model_[model]->overflow;
      }
      auto fresh = std::make_unique<Series>(model, variant, worker, h, &bounds_us_);
      if (table_[i].compare_exchange_strong(s, fresh.get(), std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
        return fresh.release();
      }
      series_count_.fetch_sub(1, kRelaxed);  // another thread filled the slot: compare it
    }
    if (s->hash == h && s->model == model && s->variant == variant && s->worker == worker) return s;
  }
  return &by_model_[model]->overflow;
}

void RequestMetrics::RecordInvalid(size_t model) {
  if (model >= by_model_.size()) return;
  outcomes_->Add(model, kRowInvalid, "", Duration::zero());
}

void RequestMetrics::RecordOutcome(size_t model, const InferOutcome& outcome, Duration request_time,
                                   int32_t rows, Duration slo) {
  if (model >= by_model_.size()) return;
  Model& m = *by_model_[model];
  const bool ok = outcome.status.ok();
  outcomes_->Add(model, RowOf(outcome), ok ? std::string_view(outcome.variant) : "", slo);
  Series* s = FindOrAddSeries(model, ok ? std::string_view(outcome.variant) : "none",
                              ok ? std::string_view(outcome.worker) : "none");
  s->request.Add(request_time);
  const int64_t ns = request_time.count() * 1000;
  if (!ok) {
    m.fail_count.fetch_add(1, kRelaxed);
    m.fail_ns.fetch_add(ns, kRelaxed);
    return;
  }
  s->queue.Add(outcome.queue_time);
  s->compute.Add(outcome.compute_time);
  m.success_count.fetch_add(1, kRelaxed);
  m.success_ns.fetch_add(ns, kRelaxed);
  m.queue_ns.fetch_add(outcome.queue_time.count() * 1000, kRelaxed);
  m.compute_ns.fetch_add(outcome.compute_time.count() * 1000, kRelaxed);
  m.rows.fetch_add(rows, kRelaxed);
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  m.last_ms.store(now_ms, kRelaxed);
}

std::string RequestMetrics::RenderPrometheus() const {
  std::string out;
  out.reserve(4096);
  std::vector<const Series*> series;
  for (const auto& slot : table_) {
    if (const Series* s = slot.load(std::memory_order_acquire)) series.push_back(s);
  }
  for (const auto& m : by_model_) {
    bool used = false;
    for (size_t b = 0; b <= bounds_us_.size(); ++b)
      used = used || m->overflow.request.counts[b].load(kRelaxed) > 0;
    if (used) series.push_back(&m->overflow);
  }
  auto histogram = [&](const char* name, const char* help, Histogram Series::*which) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    for (const Series* s : series) {
      const Histogram& h = s->*which;
      std::string labels;
      AppendLabel(labels, "model", models_[s->model]);
      labels += ',';
      AppendLabel(labels, "variant", s->variant);
      labels += ',';
      AppendLabel(labels, "worker", s->worker);
      int64_t cumulative = 0;
      char buf[64];
      for (size_t b = 0; b <= buckets_.size(); ++b) {
        cumulative += h.counts[b].load(kRelaxed);
        if (b < buckets_.size()) {
          std::snprintf(buf, sizeof buf, "%.9g", buckets_[b]);
        } else {
          std::snprintf(buf, sizeof buf, "+Inf");
        }
        out += std::string(name) + "_bucket{" + labels + ",le=\"" + buf + "\"} " +
               std::to_string(cumulative) + "\n";
      }
      std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(h.sum_us.load(kRelaxed)) / 1e6);
      out += std::string(name) + "_sum{" + labels + "} " + buf + "\n";
      out += std::string(name) + "_count{" + labels + "} " + std::to_string(cumulative) + "\n";
    }
  };
  histogram("sloserve_request_duration_seconds",
            "Inference requests answered by the backend: receipt to answer.", &Series::request);
  histogram("sloserve_queue_duration_seconds",
            "Completed inference requests: arrival at the engine to batch start.", &Series::queue);
  histogram("sloserve_compute_duration_seconds",
            "Completed inference requests: batch start to completion (with any cold start).",
            &Series::compute);
  out += outcomes_->RenderPrometheus();
  return out;
}

RequestMetrics::ModelStats RequestMetrics::StatsOf(size_t model) const {
  const Model& m = *by_model_.at(model);
  ModelStats s;
  s.last_inference_ms = m.last_ms.load(kRelaxed);
  s.inference_count = m.rows.load(kRelaxed);
  s.success_count = m.success_count.load(kRelaxed);
  s.success_ns = m.success_ns.load(kRelaxed);
  s.fail_count = m.fail_count.load(kRelaxed);
  s.fail_ns = m.fail_ns.load(kRelaxed);
  s.queue_ns = m.queue_ns.load(kRelaxed);
  s.compute_ns = m.compute_ns.load(kRelaxed);
  return s;
}

std::string RequestMetrics::RenderModelStats(size_t model) const {
  const ModelStats m = StatsOf(model);
  auto stat = [](int64_t count, int64_t ns) {
    return "{\"count\":" + std::to_string(count) + ",\"ns\":" + std::to_string(ns) + "}";
  };
  std::string out = "{\"name\":";
  AppendJsonString(out, models_[model]);
  out += ",\"version\":\"\",\"last_inference\":" + std::to_string(m.last_inference_ms) +
         ",\"inference_count\":" + std::to_string(m.inference_count) +
         ",\"execution_count\":" + std::to_string(m.success_count) + ",\"inference_stats\":{" +
         "\"success\":" + stat(m.success_count, m.success_ns) +
         ",\"fail\":" + stat(m.fail_count, m.fail_ns) +
         ",\"queue\":" + stat(m.success_count, m.queue_ns) +
         ",\"compute_input\":" + stat(m.success_count, 0) +
         ",\"compute_infer\":" + stat(m.success_count, m.compute_ns) +
         ",\"compute_output\":" + stat(m.success_count, 0) + ",\"cache_hit\":" + stat(0, 0) +
         ",\"cache_miss\":" + stat(0, 0) + "},\"batch_stats\":[]}";
  return out;
}

}  // namespace sloserve
