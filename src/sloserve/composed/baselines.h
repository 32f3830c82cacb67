#pragma once
// The baselines of issue 32 as restrictions of the composed problem (composed/problem.h),
// so that the composition and its baselines are solved by the same code:
//   fixed variants   per model one allowed variant (no variant planning: RAMSIS alone
//                    chooses nothing, InfAdapter's variant set is one)
//   fixed hardware   per model one allowed hardware type (no Kairos-style mix)
//   static sizing    what a hand-made Triton / TF Serving deployment does: each of the M
//                    models with a candidate gets an equal share budget / M of the $/h
//                    budget, and as many workers of its one (fixed variant, fixed type)
//                    candidate as the share buys, at least 1; no solver. A type without a
//                    price buys the workers the model's load needs. Per-type limits
//                    (max_workers) are not applied: the shares decide.
#include <vector>

#include "sloserve/composed/problem.h"
#include "sloserve/core/status.h"

namespace sloserve {

struct ComposedRestrictions {
  // Per model (TaskId); kNoId or a missing entry = planned.
  std::vector<VariantId> fixed_variant;
  std::vector<HardwareId> fixed_hardware;
};

// The problem with only the candidates the restrictions allow.
ComposedProblem RestrictComposedProblem(const ComposedProblem& problem,
                                        const ComposedRestrictions& restrictions);

// Model m's most accurate variant with a candidate (ties: the lower id); kNoId if none.
VariantId DefaultFixedVariant(const ComposedProblem& problem, TaskId m);
// The hardware type with the highest capacity per $/h for (m, v) (a type without a price
// first, by capacity; ties: the lower id); kNoId if (m, v) has no candidate.
HardwareId DefaultFixedHardware(const ComposedProblem& problem, TaskId m, VariantId v);

// The static deployment (see above). FailedPrecondition when a model has more than one
// candidate (fix its variant and hardware first).
StatusOr<ComposedPlan> ComposedStaticPlan(const ComposedProblem& problem);

}  // namespace sloserve
