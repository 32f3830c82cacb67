#pragma once
// The candidates of the composed problem (composed/problem.h) from a profile suite in
// which every model is a task (profile/suite_composition.h): one per (model, variant,
// hardware type) the suite profiles.
//
// A worker's capacity: the highest throughput b / L_q(b) over the profiled batch sizes b
// whose latency quantile L_q(b) (q = 0.99 of the service-time samples, as the simulator
// replays them) is within slo_fraction * SLO, and whose variant fits the memory of a
// machine of that type (memory_gb; 0 = unlimited). The rest of the SLO is left for queueing:
// a batch of b waits for up to b arrivals and for the batch ahead of it, so a batch that
// takes the whole SLO misses it. A candidate with no such batch gets no column.
//
// A variant with capacity records at its model's SLO (InfAdapter's measured capacity
// curves: infadapter-resnet, whose hardware types are core counts cpu-<N>c) gets
// InfAdapter's capacity instead (infadapter/capacity.h): the line fitted on the records
// at 1, 2, 4, 8 and 16 cores, read at the type's cores, where the type's own p99 at that
// capacity is within the SLO (else no column). The records measured the rate that meets
// the SLO with its queueing, so slo_fraction does not apply. This makes the core count a
// decision of the composed planner: one hardware type per core count, priced per core.
//
// Why not infadapter/capacity.h or policy/planning/kairos_upper_bound.h for every suite:
// InfAdapter's capacity is a line fitted to measured (variant, cores) capacity records at one SLO,
// which only the infadapter-resnet suite has; the other suites profile latency per
// batch size on fixed hardware types. Kairos' upper bound is the throughput of a mix of
// instance types for one variant from a sample of query sizes at batch 1 with no
// queueing, and is not additive across types (small queries move to the auxiliary
// types), so it cannot be a per-worker coefficient of a linear program. The per-worker
// capacity here is the one-type case of the same idea (throughput within QoS), taken
// over batch sizes, with the SLO fraction standing in for the queueing Kairos ignores.
#include <vector>

#include "sloserve/composed/problem.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct ComposedCapacityOptions {
  double slo_fraction = 0.5;  // of each model's SLO, in (0, 1]
  double quantile = 0.99;
};

// Requests/s one worker of (hw, v) sustains with L_q(b) <= slo_fraction * slo; 0 when
// no profiled batch size does. From the capacity records when v has some at `slo`.
double ComposedWorkerCapacity(const ProfileSuite& suite, HardwareId hw, VariantId v, Duration slo,
                              const ComposedCapacityOptions& options);

// Every (task, variant, hardware) with a positive capacity, in the suite's order of
// variants, then hardware. slo_by_model[t] = task t's SLO (one per task). Candidates have
// current = 0. Errors: a bad option, a size mismatch or a non-positive SLO.
StatusOr<std::vector<ComposedCandidate>> BuildComposedCandidates(
    const ProfileSuite& suite, const std::vector<Duration>& slo_by_model,
    const ComposedCapacityOptions& options = {});

}  // namespace sloserve
