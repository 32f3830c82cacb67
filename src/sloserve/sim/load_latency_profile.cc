#include "sloserve/sim/load_latency_profile.h"

#include <atomic>
#include <thread>

#include "sloserve/core/mutex.h"
#include "sloserve/engine/deployment.h"
#include "sloserve/policy/selection/load_granular.h"
#include "sloserve/sim/simulation.h"

namespace sloserve {

StatusOr<ResponseLatencyTable> MeasureResponseLatency(
    const LoadLatencyRequest& req, const ProfileSuite& suite,
    const std::function<void(size_t, size_t)>& progress) {
  if (req.workers.empty() || req.loads_qps.empty()) {
    return InvalidArgumentError("load-latency: need at least one worker count and one load");
  }
  DeploymentSpec dspec;
  dspec.task = req.base.task;
  dspec.hardware = req.base.hardware;
  dspec.slo = req.base.slo;
  ASSIGN_OR_RETURN(Deployment dep, ResolveDeployment(suite, dspec));
  std::vector<std::string> variants = req.variants;
  if (variants.empty()) {
    for (VariantId v : suite.VariantsOfTask(dep.task)) variants.push_back(suite.variants()[v].name);
  }
  struct Job {
    std::string variant;
    int batch;
    int workers;
  };
  std::vector<Job> jobs;
  for (const std::string& name : variants) {
    auto v = suite.FindVariant(name);
    if (!v) return NotFoundError("load-latency: unknown variant '" + name + "'");
    int batch = AdaptiveBatch(suite, dep.hardware, *v, dep.slo / 2, req.base.service.quantile);
    if (batch == 0) continue;  // too slow for half the SLO: never selected by the baselines
    for (int w : req.workers) jobs.push_back({name, batch, w});
  }
  const double slo_ms = ToMillis(dep.slo);
  struct {
    Mutex mu;  // also serialises the progress callbacks
    ResponseLatencyTable table GUARDED_BY(mu);
    Status first_error GUARDED_BY(mu);
    size_t done GUARDED_BY(mu) = 0;
  } shared;
  std::atomic<size_t> next{0};
  auto work = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= jobs.size()) return;
      const Job& job = jobs[i];
      for (double load : req.loads_qps) {
        RunSpec spec = req.base;
        spec.workers = job.workers;
        spec.slo = dep.slo;
        spec.arrival.kind = "poisson";
        spec.arrival.rate_qps = load;
        spec.policy = PolicySpec();
        spec.policy.dispatch = "shared";
        spec.policy.batching = "edf";
        spec.policy.selection = "fixed";
        spec.policy.options = {{"variant", job.variant}, {"max_batch", std::to_string(job.batch)}};
        auto r = RunSimulation(spec, suite);
        MutexLock lock(shared.mu);
        if (!r.ok()) {
          if (shared.first_error.ok()) shared.first_error = r.status();
          return;
        }
        shared.table.Add(
            {job.variant, job.workers, slo_ms, load, r->summary.p99_ms, r->summary.violation_rate});
        if (r->summary.p99_ms > 2 * slo_ms) break;
      }
      MutexLock lock(shared.mu);
      ++shared.done;
      if (progress) progress(shared.done, jobs.size());
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::max(1, req.jobs); ++j) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  MutexLock lock(shared.mu);  // uncontended now; says to the analysis what it guards
  if (!shared.first_error.ok()) return shared.first_error;
  return std::move(shared.table);
}

}  // namespace sloserve
