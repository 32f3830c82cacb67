#include "sloserve/cluster/placement_rules.h"

#include <algorithm>
#include <cmath>

namespace sloserve {
namespace {

constexpr int kNone = -1;

int PickRandomOf(const std::vector<int>& v, Rng& rng) {
  return v[static_cast<size_t>(Uniform01(rng) * static_cast<double>(v.size()))];
}

// Among `v`, the fewest ongoing requests (ties: lowest index).
int LeastOngoingOf(const std::vector<ProxyState>& p, const std::vector<int>& v) {
  int best = v.front();
  for (int m : v) {
    if (p[m].ongoing < p[best].ongoing) best = m;
  }
  return best;
}

// Free proxies that could start the model locally (`warm`: only those holding it).
std::vector<int> FreeHolding(const std::vector<ProxyState>& p, bool warm) {
  std::vector<int> out;
  for (int m = 0; m < static_cast<int>(p.size()); ++m) {
    if (p[m].free && p[m].can_hold && (!warm || p[m].holds)) out.push_back(m);
  }
  return out;
}

// The registry's warm proxy (the thesis' LocateModelProxy): the first holder, in order,
// with fewer than target_ongoing_requests ongoing.
int RegistryProxy(const std::vector<ProxyState>& p, int target) {
  for (int m = 0; m < static_cast<int>(p.size()); ++m) {
    if (p[m].holds && p[m].ongoing < target) return m;
  }
  return kNone;
}

PlacementChoice Local(int m) {
  PlacementChoice d;
  d.place = true;
  d.machine = d.proxy = m;
  return d;
}

PlacementChoice DecideFixed(ClusterPolicy policy, const std::vector<ProxyState>& p,
                            const PlacementParams& params, Rng& rng) {
  PlacementChoice d;
  switch (policy) {
    case ClusterPolicy::kRandom: {
      const std::vector<int> free = FreeHolding(p, false);
      if (free.empty()) return d;
      return Local(PickRandomOf(free, rng));
    }
    case ClusterPolicy::kColocation: {
      const std::vector<int> warm = FreeHolding(p, true);
      if (!warm.empty()) return Local(LeastOngoingOf(p, warm));
      const std::vector<int> free = FreeHolding(p, false);
      if (free.empty()) return d;
      return Local(PickRandomOf(free, rng));
    }
    case ClusterPolicy::kColocationQueue: {
      const bool anyone_holds =
          std::any_of(p.begin(), p.end(), [](const ProxyState& s) { return s.holds; });
      const std::vector<int> warm = FreeHolding(p, true);
      if (!warm.empty()) return Local(LeastOngoingOf(p, warm));
      if (anyone_holds) return d;  // wait for a warm machine
      const std::vector<int> free = FreeHolding(p, false);
      if (free.empty()) return d;
      return Local(PickRandomOf(free, rng));
    }
    case ClusterPolicy::kRegistry: {
      const int proxy = RegistryProxy(p, params.target_ongoing_requests);
      if (proxy != kNone) {
        // The warm machine itself: no transfer (unless spawning at random, as the thesis).
        if (p[proxy].free && !params.registry_spawn_random) return Local(proxy);
        std::vector<int> free;
        for (int m = 0; m < static_cast<int>(p.size()); ++m) {
          if (p[m].free) free.push_back(m);
        }
        if (free.empty()) return d;
        d.place = true;
        d.machine = PickRandomOf(free, rng);
        d.proxy = proxy;  // machine == proxy when the draw is the warm machine: no transfer
        return d;
      }
      // No warm proxy under the target: the local proxy downloads the model.
      const std::vector<int> free = FreeHolding(p, false);
      if (free.empty()) return d;
      return Local(PickRandomOf(free, rng));
    }
    case ClusterPolicy::kMultiplexed: {
      std::vector<int> warm;
      for (int m : FreeHolding(p, true)) {
        if (p[m].ongoing < params.target_ongoing_requests) warm.push_back(m);
      }
      if (!warm.empty()) return Local(LeastOngoingOf(p, warm));
      const std::vector<int> free = FreeHolding(p, false);
      if (free.empty()) return d;
      return Local(LeastOngoingOf(p, free));
    }
    case ClusterPolicy::kAdaptive:
    case ClusterPolicy::kPrefetch:
      break;
  }
  return d;
}

PlacementChoice DecideAdaptive(const std::vector<ProxyState>& p, const ModelTimes& t,
                               const PlacementParams& params, Rng& rng) {
  const int n = static_cast<int>(p.size());
  // The warm proxy colocation with queuing would wait for: least backlog among holders.
  int queue_target = kNone;
  double best_backlog = 0;
  for (int m = 0; m < n; ++m) {
    if (!p[m].holds) continue;
    const double backlog = p[m].remaining_load + p[m].ongoing * (t.infer + t.pre + t.post);
    if (queue_target == kNone || backlog < best_backlog) {
      queue_target = m;
      best_backlog = backlog;
    }
  }
  const int registry_target = RegistryProxy(p, params.target_ongoing_requests);
  // The cold machine: a free one without the model whose proxy has the least backlog
  // (ties: the most free cache, so fewer evictions; then the lowest index).
  int cold_target = kNone;
  for (int m : FreeHolding(p, false)) {
    if (p[m].holds) continue;
    if (cold_target == kNone || p[m].backlog < p[cold_target].backlog ||
        (p[m].backlog == p[cold_target].backlog && p[m].room_mb > p[cold_target].room_mb)) {
      cold_target = m;
    }
  }
  auto warm = [&](int m) { return WarmProxy{p[m].ongoing, p[m].remaining_load, p[m].backlog}; };
  WarmProxy q, r, c;
  if (queue_target != kNone) q = warm(queue_target);
  if (registry_target != kNone) r = warm(registry_target);
  if (cold_target != kNone) c = warm(cold_target);
  const LatencyEstimates e = EstimateLatencies(
      t, params.network_s, queue_target == kNone ? nullptr : &q,
      registry_target == kNone ? nullptr : &r, cold_target == kNone ? nullptr : &c);
  // Ties go to the local, warm choice first.
  ClusterPolicy choice = ClusterPolicy::kColocationQueue;
  double best = e.queue;
  if (e.colocation < best) {
    choice = ClusterPolicy::kColocation;
    best = e.colocation;
  }
  if (e.registry < best) {
    choice = ClusterPolicy::kRegistry;
    best = e.registry;
  }
  if (std::isinf(best)) choice = ClusterPolicy::kColocation;  // nobody warm, nothing free
  PlacementChoice d;
  if (choice == ClusterPolicy::kColocation && cold_target != kNone) {
    // Start cold where the estimate assumed; a free warm machine still comes first.
    const std::vector<int> warm_free = FreeHolding(p, true);
    d = Local(warm_free.empty() ? cold_target : LeastOngoingOf(p, warm_free));
  } else if (choice == ClusterPolicy::kColocationQueue) {
    // Wait for the warm proxy the estimate was for: run there once it is free, never on
    // another holder (one still loading the model ahead of demand, say), whose wait the
    // estimate did not price.
    if (queue_target != kNone && p[queue_target].free && p[queue_target].can_hold)
      d = Local(queue_target);
  } else {
    d = DecideFixed(choice, p, params, rng);
  }
  d.estimated = true;
  d.estimates = e;
  d.chosen = choice;
  return d;
}

}  // namespace

const std::vector<std::string>& ClusterPolicyNames() {
  static const std::vector<std::string> kNames = {"random",     "colocation", "colocation_queue",
                                                  "registry",   "adaptive",   "prefetch",
                                                  "multiplexed"};
  return kNames;
}

const char* ClusterPolicyName(ClusterPolicy p) {
  return ClusterPolicyNames()[static_cast<size_t>(p)].c_str();
}

StatusOr<ClusterPolicy> ParseClusterPolicy(const std::string& name) {
  const auto& names = ClusterPolicyNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<ClusterPolicy>(i);
  }
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  return InvalidArgumentError("unknown model-aware placement policy '" + name +
                              "' (one of: " + all + ")");
}

PlacementChoice DecidePlacement(ClusterPolicy policy, const std::vector<ProxyState>& proxies,
                                const ModelTimes& t, const PlacementParams& params, Rng& rng) {
  if (policy == ClusterPolicy::kAdaptive || policy == ClusterPolicy::kPrefetch)
    return DecideAdaptive(proxies, t, params, rng);
  PlacementChoice d = DecideFixed(policy, proxies, params, rng);
  d.chosen = policy;
  return d;
}

double PopularityWindow::Add(int model) {
  models_.push_back(model);
  if (static_cast<int>(models_.size()) > window_) models_.pop_front();
  return static_cast<double>(std::count(models_.begin(), models_.end(), model)) /
         static_cast<double>(models_.size());
}

int PickPrefetchProxy(const std::vector<ProxyState>& proxies, double share, double min_share) {
  if (share < min_share) return kNone;
  const int holders = static_cast<int>(
      std::count_if(proxies.begin(), proxies.end(), [](const ProxyState& s) { return s.holds; }));
  const int want =
      std::max(1, static_cast<int>(std::ceil(share * static_cast<double>(proxies.size()))));
  if (holders >= want) return kNone;
  // An idle proxy that can hold the model: the one with the most free room.
  int best = kNone;
  for (int m = 0; m < static_cast<int>(proxies.size()); ++m) {
    const ProxyState& s = proxies[m];
    if (!s.idle || s.holds || !s.can_hold) continue;
    if (best == kNone || s.room_mb > proxies[best].room_mb) best = m;
  }
  return best;
}

}  // namespace sloserve
