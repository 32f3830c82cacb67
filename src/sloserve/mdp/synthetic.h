#pragma once
// Synthetic model sets along a Pareto front (RAMSIS section 7.3.2 / appendix E): between
// each pair of adjacent front variants (sorted by accuracy), insert variants every
// `accuracy_step` percentage points of accuracy, whose latency samples at each batch
// size interpolate linearly, quantile by quantile, between the two neighbours'. The
// result is a strict superset of the front; with the 9 ramsis-image front variants and
// a 0.5 step it has 60 variants.
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve::mdp {

struct SyntheticSuiteOptions {
  std::string task;                // empty: the suite's only task / the variants' task
  std::vector<std::string> front;  // the Pareto variants to interpolate between
  double accuracy_step = 0.5;      // percentage points
  int samples = 101;               // latency samples per synthetic (hardware, batch)
};

// A new suite (name "<base>-synthetic") with the base's tasks and hardware, the front
// variants (samples copied) and the synthetic ones ("synth_<lo>_<hi>_<accuracy>"),
// profiled at the batch sizes both neighbours have, on every hardware both are profiled.
StatusOr<ProfileSuite> MakeSyntheticParetoSuite(const ProfileSuite& base,
                                                const SyntheticSuiteOptions& options);

// The 9 image-classification Pareto variants of the RAMSIS paper (datasets README).
std::vector<std::string> RamsisImageParetoVariants();

}  // namespace sloserve::mdp
