#pragma once
// Per-model request metrics of the inference frontend: Prometheus histograms of request,
// queue and compute time labelled by model, variant and worker; request counters by
// outcome and SLO-miss reason; and the totals Triton's statistics extension reports
// (GET /v2/models/{m}/stats). Names and labels: docs/metrics.md ("Prometheus").
//
// Recording is lock-free (relaxed atomics; a (model, variant, worker) series is created
// by a compare-and-swap into a fixed table), so the request path never waits for a
// /metrics scrape. Label sets are bounded: models are fixed at construction, and at most
// `kMaxSeries` (variant, worker) combinations get their own series; the rest share one
// series per model labelled variant="other", worker="other". The request counters, with
// their variant and SLO-class labels, are bounded alike (outcome_counters.h).
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/inference_backend.h"
#include "sloserve/server/outcome_counters.h"

namespace sloserve {

// Histogram buckets around the SLOs a deployment serves: the 1-2-5 defaults plus, for
// each SLO, 0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5 and 2 times it, so a p99 near the
// SLO is read within a tenth of it (with the defaults alone a 150 ms SLO sits between
// the 0.1 and 0.2 s buckets). Bounds closer than 2% to a smaller one are dropped; at
// most RequestMetrics::kMaxBuckets.
std::vector<double> LatencyBucketsForSlos(const std::vector<Duration>& slos);
// InvalidArgument unless 1..kMaxBuckets finite bounds > 0, strictly ascending.
Status CheckLatencyBuckets(const std::vector<double>& buckets);

class RequestMetrics {
 public:
  static constexpr size_t kMaxSeries = 256;
  static constexpr size_t kMaxBuckets = 64;
  // Upper bounds of the histogram buckets when nothing else is said, seconds (+Inf is
  // implied): 1-2-5 steps from 0.5 ms to 60 s.
  static constexpr std::array<double, 16> kDefaultBuckets = {
      0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60};

  // `buckets`: ascending upper bounds in seconds (empty = kDefaultBuckets); checked by
  // CheckLatencyBuckets.
  explicit RequestMetrics(std::vector<std::string> models, std::vector<double> buckets = {});
  // The models as a backend serves them: their default SLOs get the first SLO classes and
  // their variants' request counters exist from the start, at 0.
  explicit RequestMetrics(const std::vector<TaskInfo>& models, std::vector<double> buckets = {});
  ~RequestMetrics();
  RequestMetrics(const RequestMetrics&) = delete;
  RequestMetrics& operator=(const RequestMetrics&) = delete;

  // A request for `model` (index into the constructor's list) refused by the frontend
  // before it reached the backend (malformed or invalid: 4xx).
  void RecordInvalid(size_t model);
  // A request answered by the backend; `request_time` from receipt of the request to
  // its outcome, `rows` its batch dimension, `slo` its SLO (the slo_class label; zero:
  // not known).
  void RecordOutcome(size_t model, const InferOutcome& outcome, Duration request_time, int32_t rows,
                     Duration slo = Duration::zero());

  // The series above in the Prometheus text format.
  std::string RenderPrometheus() const;
  // Triton's statistics extension for one model (REST and gRPC render the same numbers):
  // success = answered by the backend, fail = refused or failed by it; durations in ns.
  struct ModelStats {
    int64_t last_inference_ms = 0;  // since the epoch; 0 = none yet
    int64_t inference_count = 0;    // rows of the successful requests
    int64_t success_count = 0, success_ns = 0, fail_count = 0, fail_ns = 0;
    int64_t queue_ns = 0, compute_ns = 0;  // over the successful requests
  };
  ModelStats StatsOf(size_t model) const;
  // One entry of Triton's statistics extension "model_stats" array for `model`.
  std::string RenderModelStats(size_t model) const;
  size_t models() const { return models_.size(); }
  // The index of `model` in the constructor's list; nullopt if it is not there.
  std::optional<size_t> IndexOf(std::string_view model) const;

  struct Series;  // one (model, variant, worker) series; defined in the .cc
  struct Model;   // per-model counters

 private:
  RequestMetrics(std::vector<std::string> models, std::vector<Duration> slos,
                 std::vector<std::vector<std::string>> variants, std::vector<double> buckets);
  Series* FindOrAddSeries(size_t model, std::string_view variant, std::string_view worker);

  std::vector<std::string> models_;
  std::vector<double> buckets_;     // seconds, ascending
  std::vector<int64_t> bounds_us_;  // the same in microseconds, what Add compares
  std::vector<std::unique_ptr<Model>> by_model_;
  std::unique_ptr<OutcomeCounters> outcomes_;
  // Open addressing over (model, variant, worker); twice kMaxSeries so probes stay short.
  std::array<std::atomic<Series*>, 2 * kMaxSeries> table_{};
  std::atomic<size_t> series_count_{0};
};

}  // namespace sloserve
