#pragma once
// Shared helpers for the MDP tests: small options on the hand-built suite.
#include "sloserve/mdp/options.h"
#include "sloserve/mdp/synthetic.h"
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

// The paper's image setting (ramsis-image, 9 models, 60 workers, SLO 150 ms) with fewer
// slack levels and a shorter queue than D = 100, N = 32, so dense references and
// sanitizer runs stay fast: the kernels are as wide (60 phases) and as sparse.
inline MdpOptions SmallImageOptions(double load_qps) {
  MdpOptions o;
  o.task = "image";
  o.variants = RamsisImageParetoVariants();
  o.slo = Millis(150);
  o.workers = 60;
  o.max_queue = 12;
  o.discretization = {DiscretizationKind::kFixedLength, 20};
  o.load_qps = load_qps;
  return o;
}

}  // namespace sloserve::mdp::testing
