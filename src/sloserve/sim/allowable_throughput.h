#pragma once
// Allowable throughput (Kairos, HPDC'23, section 7 "Metrics"): the highest Poisson
// arrival rate at which the run's tail latency stays within the QoS target, found by
// gradually raising the rate until QoS is violated. Each probe is one full simulation of
// the run (same seed: probes are repeatable, and so is the whole search).
//
// QoS holds at a rate when at most (1 - quantile) of the arrived queries miss their
// deadline: violation_rate <= 1 - quantile, i.e. the `quantile` latency of all queries,
// counting a dropped query as infinitely late, is within the QoS target (p99 for the
// Kairos models). Search: from `start_qps`, double while QoS holds (halve while it does
// not) to bracket [ok, fail], then bisect until fail - ok <= rel_tol x ok. The result is
// the last rate that held. Assumes QoS is monotone in the rate; with stochastic runs it
// reports one crossing point of a fixed-seed curve.
#include <string>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ThroughputSearchOptions {
  double start_qps = 10;
  double rel_tol = 0.02;
  double quantile = 0.99;
  double min_qps = 0.1;  // below this the allowable throughput is reported as 0
  double max_qps = 1e6;  // probes never exceed this
  int max_probes = 60;
};

struct ThroughputProbe {
  double qps = 0;
  bool ok = false;
  double violation_rate = 0;
  double p99_ms = 0;
};

struct ThroughputSearchResult {
  double allowable_qps = 0;  // 0: QoS fails even at min_qps
  std::vector<ThroughputProbe> probes;
};

// `base` must use a synthetic arrival kind (poisson by default); its rate is replaced.
StatusOr<ThroughputSearchResult> FindAllowableThroughput(const RunSpec& base,
                                                         const ProfileSuite& suite,
                                                         const ThroughputSearchOptions& options);

// Hill climbing of one integer policy option (DRS' size threshold) on allowable
// throughput: a coarse sweep of about 10 points over [lo, hi] (and `start`) picks the
// starting point, then move by `step` towards the better neighbour within [lo, hi]
// while it improves; each evaluation is a FindAllowableThroughput search.
struct HillClimbResult {
  int64_t best_value = 0;
  ThroughputSearchResult best;
  std::vector<std::pair<int64_t, double>> evaluated;  // (value, allowable qps)
};
StatusOr<HillClimbResult> HillClimbOption(const RunSpec& base, const ProfileSuite& suite,
                                          const ThroughputSearchOptions& options,
                                          const std::string& option, int64_t lo, int64_t hi,
                                          int64_t step, int64_t start);

}  // namespace sloserve
