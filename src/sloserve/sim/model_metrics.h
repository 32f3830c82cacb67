#pragma once
// Per-model results of a multi-model run (docs/multi-model.md): the engine's metrics
// (MetricsCollector), one collector per model fed from the per-query records, so each
// model's row is defined exactly as the run's total is and the rows' counts add up to
// the total's. Batches and busy time are shared out by the queries a batch held (a batch
// serves one model: the engine never mixes models in a batch); cold starts are counted
// per model from the loads the engine sends (ModelLoadCounter).
#include <vector>

#include "sloserve/engine/metrics.h"
#include "sloserve/engine/query_record.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

class ModelMetrics {
 public:
  ModelMetrics(const ProfileSuite* suite, Duration interval);

  void OnRecord(const QueryRecord& r);
  void OnLoad(VariantId v);
  // One summary per task of the suite (= per model), as MetricsCollector::Summarize.
  std::vector<MetricsSummary> Summarize(TimePoint end, int workers) const;

 private:
  struct PerModel {
    MetricsCollector collector;
    double batches = 0;  // a batch of n queries counts 1/n for each
    int64_t queries_run = 0;
    double busy_us = 0;
    int64_t loads = 0;
  };
  const ProfileSuite* suite_;
  std::vector<PerModel> models_;
};

// Forwards every action to `inner`, telling `metrics` of each load (a cold start) first.
class ModelLoadCounter : public WorkerExecutor {
 public:
  ModelLoadCounter(WorkerExecutor* inner, ModelMetrics* metrics)
      : inner_(inner), metrics_(metrics) {}
  ExecutorWait* TakeWait() override { return inner_->TakeWait(); }
  void Attach(ResultSink* sink) override { inner_->Attach(sink); }
  Duration Send(const WorkerAction& action) override;

 private:
  WorkerExecutor* inner_;
  ModelMetrics* metrics_;
};

}  // namespace sloserve
