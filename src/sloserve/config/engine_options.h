#pragma once
// One path from a run's config to the engine: the options every face (sim, serve) builds
// its engine from. Each face then adds only what is its own (sim: the virtual driver's
// offline submitter; serve: the live hooks and server.max_queue's bounds).
#include "sloserve/config/run_spec.h"
#include "sloserve/engine/engine.h"

namespace sloserve {

enum class Face { kSim, kServe };

// Admission (default: off in sim, on in serve), its queue bound and priority levels, the
// per-worker queue bound, the series interval and the policies' names.
EngineOptions EngineOptionsFor(const RunSpec& spec, Face face);

// Multi-model runs (docs/multi-model.md), on the suite composed from spec.models (task i =
// models[i]): each model's SLO (EngineOptions::model_slo) and, for a model whose policy
// differs from the pool's, its batching policy (PolicySet::model_batching). Nothing for
// a run without models.
Status AddModelOverrides(const RunSpec& spec, const ProfileSuite& suite, PolicySet* policies,
                         EngineOptions* options);

}  // namespace sloserve
