#include "sloserve/policy/selection/jellyfish_plus.h"

#include "sloserve/profile/profile.h"

namespace sloserve {

StatusOr<std::unique_ptr<SelectionPolicy>> JellyfishPlusSelection::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(LoadGranularOptions o, ParseLoadGranularOptions(p));
  o.policy = "jellyfish_plus";
  return std::unique_ptr<SelectionPolicy>(new JellyfishPlusSelection(o));
}

SelectionDecision JellyfishPlusSelection::Pick(const std::vector<Candidate>& ranked, HardwareId hw,
                                               Duration, double load_qps) {
  const Candidate* fastest = nullptr;
  double fastest_tput = -1;
  for (const Candidate& c : ranked) {
    const LatencyDistribution* d = suite().Latency(hw, c.variant, c.batch);
    double mean_s = d ? ToSeconds(d->Mean()) : 0;
    double throughput = mean_s > 0 ? workers() * c.batch / mean_s : 0;
    if (throughput > load_qps) return {c.variant, c.batch};  // most accurate that keeps up
    if (throughput > fastest_tput) {
      fastest_tput = throughput;
      fastest = &c;
    }
  }
  return {fastest->variant, fastest->batch};
}

}  // namespace sloserve
