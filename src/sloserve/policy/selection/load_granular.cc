#include "sloserve/policy/selection/load_granular.h"

#include <algorithm>
#include <sstream>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/selection/variant_lookup.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

int AdaptiveBatch(const ProfileSuite& suite, HardwareId hw, VariantId v, Duration budget,
                  double quantile) {
  int best = 0;
  for (int b : suite.BatchSizes(hw, v)) {
    const LatencyDistribution* d = suite.Latency(hw, v, b);
    if (d && d->Quantile(quantile) <= budget) best = b;
  }
  return best;
}

StatusOr<LoadGranularOptions> ParseLoadGranularOptions(const PolicyParams& params) {
  LoadGranularOptions o;
  ASSIGN_OR_RETURN(double window_ms, params.GetDouble(kWindowMsOption));
  ASSIGN_OR_RETURN(o.quantile, params.GetDouble(kQuantileOption));
  ASSIGN_OR_RETURN(std::string variants, params.GetString(kVariantsOption));
  std::stringstream ss(variants);
  for (std::string v; std::getline(ss, v, ',');) {
    if (!v.empty()) o.variants.push_back(v);
  }
  o.window = MillisF(window_ms);
  return o;
}

Status LoadGranularSelection::Init(const PolicyContext& ctx) {
  suite_ = ctx.suite;
  workers_ = std::max<int>(1, static_cast<int>(ctx.workers.size()));
  for (const std::string& name : options_.variants) {
    ASSIGN_OR_RETURN(VariantId v, FindOptionVariant(*suite_, ctx.task, options_.policy, "variants",
                                                    name, /*same_task=*/false));
    allowed_.push_back(v);
  }
  return OkStatus();
}

const std::vector<LoadGranularSelection::Candidate>& LoadGranularSelection::Ranked(HardwareId hw,
                                                                                   TaskId task,
                                                                                   Duration slo) {
  auto key = std::make_tuple(hw, task, slo.count());
  auto it = ranked_.find(key);
  if (it != ranked_.end()) return it->second;
  std::vector<Candidate> list;
  // Inference latency must stay under half the SLO, leaving the other half for the
  // worst-case wait in the central queue (Jellyfish; RAMSIS section 7).
  for (VariantId v : suite_->VariantsOfTask(task)) {
    if (!allowed_.empty() && std::find(allowed_.begin(), allowed_.end(), v) == allowed_.end()) {
      continue;
    }
    int b = AdaptiveBatch(*suite_, hw, v, slo / 2, options_.quantile);
    if (b > 0) list.push_back({v, b, suite_->variants()[v].accuracy});
  }
  std::sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
    return a.accuracy != b.accuracy ? a.accuracy > b.accuracy : a.variant < b.variant;
  });
  return ranked_.emplace(key, std::move(list)).first->second;
}

SelectionDecision LoadGranularSelection::Choose(const WorkerView& worker, const QueueView& queue,
                                                const Query& head, TimePoint now) {
  const std::vector<Candidate>& ranked = Ranked(worker.hardware, head.task, head.slo());
  if (ranked.empty()) {
    // No variant fits half the SLO: serve with the fastest at batch 1 (late rather than never).
    VariantId fastest = kNoId;
    Duration best = Duration::max();
    for (VariantId v : suite_->VariantsOfTask(head.task)) {
      const LatencyDistribution* d = suite_->Latency(worker.hardware, v, 1);
      if (d && d->Quantile(options_.quantile) < best) {
        best = d->Quantile(options_.quantile);
        fastest = v;
      }
    }
    return {fastest, fastest == kNoId ? 0 : 1};
  }
  (void)queue;
  return Pick(ranked, worker.hardware, head.slo(), monitor_.RateQps(now));
}

}  // namespace sloserve
