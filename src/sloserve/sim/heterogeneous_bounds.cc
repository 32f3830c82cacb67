#include "sloserve/sim/heterogeneous_bounds.h"

#include <cstdlib>
#include <sstream>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/rng.h"
#include "sloserve/policy/dispatch/kairos_common.h"
#include "sloserve/policy/dispatch/oracle.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"
#include "sloserve/workload/query_size_sampler.h"

namespace sloserve {

StatusOr<HeteroRunInfo> ResolveHeteroRun(const RunSpec& run, const ProfileSuite& suite) {
  HeteroRunInfo info;
  auto task = run.task.empty() ? std::optional<TaskId>(0) : suite.FindTask(run.task);
  if (!task) return NotFoundError("task '" + run.task + "' not in the suite");
  info.task = *task;
  info.qos = run.slo.count() > 0 ? run.slo : suite.tasks()[*task].default_slo;
  info.variant = suite.MostAccurateVariant(*task);
  if (info.variant == kNoId) return InvalidArgumentError("task '" + run.task + "' has no variant");
  return info;
}

StatusOr<InstanceMix> ParseInstanceMix(const RunSpec& run, const ProfileSuite& suite) {
  InstanceMix mix;
  std::stringstream ss(run.hardware.empty() ? suite.hardware()[0].name : run.hardware);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t colon = item.find(':');
    auto h = suite.FindHardware(item.substr(0, colon));
    if (!h) return NotFoundError("hardware '" + item + "' not in the suite");
    int count = run.workers;
    if (colon != std::string::npos) {
      const std::optional<int64_t> c = ParseInteger(std::string_view(item).substr(colon + 1));
      if (!c || *c < 0 || *c > 100000)
        return InvalidArgumentError("hardware '" + item + "': expected type:count");
      count = static_cast<int>(*c);
    }
    mix.emplace_back(*h, count);
  }
  return mix;
}

StatusOr<std::vector<int>> SampleQuerySizes(const RunSpec& run, int64_t n,
                                            std::string_view stream) {
  if (n < 1) return InvalidArgumentError("query-size sample must have >= 1 query");
  ASSIGN_OR_RETURN(auto sampler, MakeQuerySizeSampler(run.sizes));
  Rng rng = MakeRng(run.seed, stream);
  std::vector<int> sizes(static_cast<size_t>(n));
  for (int& s : sizes) s = sampler->Sample(rng);
  return sizes;
}

StatusOr<double> OracleBoundForMix(const RunSpec& run, const ProfileSuite& suite,
                                   const InstanceMix& mix, int64_t queries) {
  ASSIGN_OR_RETURN(HeteroRunInfo info, ResolveHeteroRun(run, suite));
  PolicyContext ctx;
  ctx.suite = &suite;
  ctx.task = info.task;
  for (const auto& [hw, count] : mix) {
    for (int k = 0; k < count; ++k) {
      WorkerView w;
      w.hardware = hw;
      ctx.workers.push_back(w);
    }
  }
  HeteroDeployment d;
  RETURN_IF_ERROR(d.Init(ctx, ""));
  LatencyPredictor pred;
  RETURN_IF_ERROR(pred.Init(suite, run.seed));
  ASSIGN_OR_RETURN(std::vector<int> sizes, SampleQuerySizes(run, queries, "kairos/oracle-sizes"));
  ASSIGN_OR_RETURN(OracleResult orc, OracleThroughput(pred, d.variant, mix, info.qos,
                                                      d.largest_query, std::move(sizes)));
  return orc.qps;
}

}  // namespace sloserve
