#pragma once
// The thesis' analytical model (section 6.5) of a request's end-to-end latency under each
// of the three model-aware policies, from live per-model estimates. docs/model-aware.md,
// "Analytical model", says where it is exact and where it approximates.
#include <limits>

namespace sloserve {

// Per-model means, in seconds: learned from completions (the profile is the prior).
struct ModelTimes {
  double infer = 0;  // T_i: inference on a warm proxy
  double pre = 0;    // CPU pre-processing on the request's machine
  double post = 0;   // CPU post-processing (T_p = pre + post)
  double load = 0;   // T_cs: cold start
};

// A warm proxy as the estimate sees it: its ongoing requests (n) and the rest of a load
// of the model still to come before they can run (0 when the model is resident).
struct WarmProxy {
  int ongoing = 0;
  double remaining_load = 0;
  double backlog = 0;  // the proxy's work ahead of a new request (any model), seconds
};

struct LatencyEstimates {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  double colocation = kNone;  // start cold on a free machine (colocation without queuing)
  double queue = kNone;       // wait for the warm machine (colocation with queuing)
  double registry = kNone;    // query the warm proxy over the network
};

// `queue_target`: the warm proxy colocation with queuing would wait for (nullptr: none);
// `registry_target`: the warm proxy under target_ongoing_requests the registry would
// query (nullptr: none); `cold_machine`: the free machine colocation would start the
// model on (nullptr: none), whose proxy backlog B_c delays the cold start.
//   T_colocation = max(B_c + T_cs + T_i + T_p, W)     W = max(R + n (T_i + T_p), B_q)
//   T_queue      = W + T_i + T_p                       (= (n+1)(T_i + T_p) when R = B = 0)
//   T_registry   = max(T_pre + T_n, B_r) + T_i + T_post
// with R the warm proxy's remaining load (0 in the thesis' setting, where it is resident)
// and B a proxy's backlog (the thesis' n T_i when its n requests are all of this model).
LatencyEstimates EstimateLatencies(const ModelTimes& t, double network_s,
                                   const WarmProxy* queue_target, const WarmProxy* registry_target,
                                   const WarmProxy* cold_machine);

}  // namespace sloserve
