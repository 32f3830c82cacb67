#include "sloserve/sim/model_metrics.h"

namespace sloserve {

ModelMetrics::ModelMetrics(const ProfileSuite* suite, Duration interval) : suite_(suite) {
  for (size_t t = 0; t < suite->tasks().size(); ++t)
    models_.push_back(PerModel{MetricsCollector(interval)});
}

void ModelMetrics::OnRecord(const QueryRecord& r) {
  if (r.task >= models_.size()) return;
  PerModel& m = models_[r.task];
  m.collector.OnArrival(r.arrival);
  const bool answered = !r.dropped && r.variant < suite_->variants().size();
  m.collector.OnDone(r, answered ? suite_->variants()[r.variant].accuracy : 0.0);
  if (answered && r.batch_size > 0) {
    const double share = 1.0 / r.batch_size;
    m.batches += share;
    ++m.queries_run;
    m.busy_us += static_cast<double>(r.service_time().count()) * share;
  }
}

void ModelMetrics::OnLoad(VariantId v) {
  if (v < suite_->variants().size()) ++models_[suite_->variants()[v].task].loads;
}

std::vector<MetricsSummary> ModelMetrics::Summarize(TimePoint end, int workers) const {
  std::vector<MetricsSummary> out;
  for (const PerModel& m : models_) {
    MetricsSummary s = m.collector.Summarize(end, workers);
    s.batches = static_cast<int64_t>(m.batches + 0.5);
    s.mean_batch_size = m.batches > 0 ? static_cast<double>(m.queries_run) / m.batches : 0;
    if (workers > 0 && s.elapsed_s > 0) s.utilization = m.busy_us * 1e-6 / (workers * s.elapsed_s);
    s.cold_starts = m.loads;
    out.push_back(std::move(s));
  }
  return out;
}

Duration ModelLoadCounter::Send(const WorkerAction& action) {
  if (const auto* load = std::get_if<LoadVariant>(&action)) metrics_->OnLoad(load->variant);
  return inner_->Send(action);
}

}  // namespace sloserve
