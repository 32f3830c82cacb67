#pragma once
// Shared helpers for the MDP tests: small options on the hand-built suite.
#include "sloserve/mdp/options.h"
#include "support/test_suite.h"

namespace sloserve::mdp::testing {

// SmallSuite: "fast" 10 ms + 2 ms/row (70%), "slow" 30 ms + 5 ms/row (80%), batch 1..8.
inline MdpOptions SmallOptions(double load_qps = 200, int workers = 2) {
  MdpOptions o;
  o.slo = Millis(60);
  o.workers = workers;
  o.load_qps = load_qps;
  o.max_queue = 8;
  o.discretization = {DiscretizationKind::kFixedLength, 12};
  return o;
}

}  // namespace sloserve::mdp::testing
