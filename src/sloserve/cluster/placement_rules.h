#pragma once
// The decision rules of the model-aware placement policies (docs/model-aware.md), shared by
// the cluster simulator (`sloserve sim` with a `cluster:` section) and the engine's
// placement policies of the same names (`policy.placement`, docs/policies/colocation.md).
// Each caller describes its proxies as it sees them (the simulator: one proxy per machine;
// the engine: one per worker) and acts on the choice; the rules themselves hold no state.
#include <deque>
#include <string>
#include <vector>

#include "sloserve/cluster/analytical_model.h"
#include "sloserve/core/rng.h"
#include "sloserve/core/status.h"

namespace sloserve {

enum class ClusterPolicy {
  kRandom,           // the thesis' default scheduler: any machine with free cores
  kColocation,       // warm machine if one is free, else start cold elsewhere
  kColocationQueue,  // wait for a warm machine
  kRegistry,         // any machine; query a warm proxy under the target, over the network
  kAdaptive,         // per request, the least of the analytical model's three estimates
  kPrefetch,         // adaptive + loading popular models on idle machines ahead of demand
  kMultiplexed,      // Ray Serve multiplexing: model-id routing, at most K models a replica
};

const std::vector<std::string>& ClusterPolicyNames();
StatusOr<ClusterPolicy> ParseClusterPolicy(const std::string& name);
const char* ClusterPolicyName(ClusterPolicy p);

// One proxy (and the machine it runs on) as the rules see it, for one request's model.
struct ProxyState {
  bool free = false;          // a request can be started there now (sim: cores free)
  bool can_hold = false;      // its cache could ever hold the model
  bool holds = false;         // cached, loading, or a request for it on the way
  bool idle = false;          // nothing ongoing, nothing being served (prefetch targets)
  int ongoing = 0;            // requests pointed at it and not finished
  double remaining_load = 0;  // seconds of a load of the model still to come
  double backlog = 0;         // seconds of work ahead of a new request (adaptive only)
  double room_mb = 0;         // free cache
};

struct PlacementChoice {
  bool place = false;  // false: the request waits (no proxy can take it now)
  int machine = -1;    // where the request runs its CPU work
  int proxy = -1;      // whose proxy serves it (machine != proxy: a network transfer)
  // adaptive/prefetch: the analytical model's estimates and the policy it acted as.
  bool estimated = false;
  LatencyEstimates estimates;
  ClusterPolicy chosen = ClusterPolicy::kRandom;
};

struct PlacementParams {
  int target_ongoing_requests = 3;
  double network_s = 0;
  // registry: where a request for a warm proxy runs its CPU work. false (sloserve's
  // default): on the warm proxy's machine when it has free cores (no transfer), else on a
  // random free machine; true (the thesis' LCSched): on a random free machine always,
  // paying the transfer unless the draw is the warm machine itself.
  bool registry_spawn_random = false;
};

// Decides for one request of a model with times `t`. Draws from `rng` only where the policy
// picks at random (so a caller's random stream stays reproducible).
PlacementChoice DecidePlacement(ClusterPolicy policy, const std::vector<ProxyState>& proxies,
                                const ModelTimes& t, const PlacementParams& params, Rng& rng);

// prefetch's popularity: the models of the last `window` arrivals.
class PopularityWindow {
 public:
  explicit PopularityWindow(int window) : window_(window) {}
  // Records an arrival of `model`; returns its share of the window.
  double Add(int model);

 private:
  int window_;
  std::deque<int> models_;
};

// prefetch: with `share` of the recent arrivals, how many proxies should hold the model
// (ceil(share x proxies), at least 1), and the idle proxy to load it on ahead of demand (the
// most free cache; -1: none, or enough hold it already). `min_share`: below it, none.
int PickPrefetchProxy(const std::vector<ProxyState>& proxies, double share, double min_share);

}  // namespace sloserve
