#include "sloserve/policy/selection/model_switching.h"

#include "sloserve/profile/profile.h"

namespace sloserve {
namespace model_switching_options {
const KeyDecl kTable{.name = "table",
                     .type = KeyType::kPath,
                     .help = "the response-latency CSV (sloserve profile load-latency); required"};
}  // namespace model_switching_options

StatusOr<std::unique_ptr<SelectionPolicy>> ModelSwitchingSelection::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(LoadGranularOptions o, ParseLoadGranularOptions(p));
  o.policy = "model_switching";
  ASSIGN_OR_RETURN(std::string path, p.GetString(model_switching_options::kTable));
  if (path.empty()) {
    return InvalidArgumentError(
        "model_switching: option 'table' is required (make one with `sloserve profile "
        "load-latency`)");
  }
  ASSIGN_OR_RETURN(ResponseLatencyTable table, ResponseLatencyTable::Load(path));
  return std::unique_ptr<SelectionPolicy>(new ModelSwitchingSelection(o, std::move(table)));
}

SelectionDecision ModelSwitchingSelection::Pick(const std::vector<Candidate>& ranked, HardwareId,
                                                Duration slo, double load_qps) {
  const double slo_ms = ToMillis(slo);
  const Candidate* best_effort = nullptr;
  double best_p99 = -1;
  for (const Candidate& c : ranked) {  // most accurate first
    double p99 = table_.P99At(suite().variants()[c.variant].name, workers(), slo_ms, load_qps);
    if (p99 < 0) continue;
    if (p99 <= slo_ms) return {c.variant, c.batch};
    if (best_effort == nullptr || p99 < best_p99) {
      best_effort = &c;
      best_p99 = p99;
    }
  }
  if (best_effort) return {best_effort->variant, best_effort->batch};
  return {ranked.back().variant, ranked.back().batch};  // nothing measured: least accurate
}

}  // namespace sloserve
