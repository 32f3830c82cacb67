#include "sloserve/cluster/cluster_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include "sloserve/cluster/model_cache.h"
#include "sloserve/core/rng.h"

namespace sloserve {
namespace {

constexpr int kNobody = -1;
constexpr int kPrefetchLoad = -2;  // a proxy busy loading a model nobody asked for yet

struct Proc {
  int model = 0;
  TimePoint arrival{}, spawn{}, exit{};
  int machine = kNobody, proxy = kNobody;
  bool cold = false;
  bool refused = false;
  std::string refusal;
  LatencyEstimates estimates;
  bool estimated = false;
  ClusterPolicy chosen = ClusterPolicy::kRandom;
};

struct MachineState {
  int cores_free = 0;
  ModelCache cache{0};
  std::deque<int> proxy_queue;  // procs waiting for the proxy, FIFO
  int serving = kNobody;        // proc at the proxy, or kPrefetchLoad
  int loading_model = kNobody;
  bool prefetch_waited = false;  // a request waits for the prefetch load under way
  TimePoint load_end{};
  TimePoint busy_until{};    // when the proxy's current load/inference ends
  int ongoing = 0;           // procs pointed at this proxy and not exited (the thesis' count)
  std::vector<int> pending;  // per model: procs pointed here that the proxy has not started
};

// Running mean with the profile's value as one prior observation.
struct Learned {
  double sum = 0;
  int n = 0;
  void Add(double x) {
    sum += x;
    ++n;
  }
  double Mean() const { return sum / n; }
};

enum class EventType { kArrive, kPreDone, kAtProxy, kLoadDone, kInferDone, kExit };

struct Event {
  TimePoint at;
  uint64_t seq;
  EventType type;
  int who;  // proc or machine
  bool operator>(const Event& o) const { return at > o.at || (at == o.at && seq > o.seq); }
};

class Simulator {
 public:
  Simulator(const ClusterConfig& c, ClusterPolicy p)
      : cfg_(c),
        policy_(p),
        rng_(MakeRng(c.seed, "cluster-placement")),
        window_(c.prefetch_window) {
    for (const ClusterMachine& m : c.machines) {
      MachineState s;
      s.cores_free = m.cores;
      s.cache = ModelCache(m.cache_mb);
      s.pending.assign(c.models.size(), 0);
      machines_.push_back(std::move(s));
    }
    for (const ClusterModel& m : c.models) {
      const ClusterWorkload& w = c.workload;
      infer_.push_back({ToSeconds(m.infer_time), 1});
      pre_.push_back({ToSeconds(w.pre), 1});
      post_.push_back({ToSeconds(w.post), 1});
      load_.push_back({ToSeconds(m.load_time), 1});
    }
  }

  ClusterResult Run();

 private:
  void Push(TimePoint at, EventType t, int who) { events_.push({at, seq_++, t, who}); }
  void Arrive(int model, TimePoint now);
  void Schedule(TimePoint now);
  PlacementChoice Decide(int p, TimePoint now);
  // The proxies as the shared placement rules see them, for a request of `model`.
  std::vector<ProxyState> ProxiesFor(int model, TimePoint now) const;
  void Place(int p, const PlacementChoice& d, TimePoint now);
  void TryServe(int m, TimePoint now);
  void OnExit(int p, TimePoint now);
  void MaybePrefetch(int model, TimePoint now);
  void Refuse(int p, std::string why, TimePoint now);

  bool Free(int m) const { return machines_[m].cores_free >= cfg_.workload.proc_cores; }
  bool CanHold(int m, int model) const {
    return machines_[m].cache.CanHold(cfg_.models[model].size_mb);
  }
  // Has the model, is loading it, or has a request for it on the way (placement committed).
  bool Holds(int m, int model) const {
    return machines_[m].cache.Contains(model) || machines_[m].pending[model] > 0;
  }
  double RemainingLoad(int m, int model, TimePoint now) const {
    const MachineState& s = machines_[m];
    if (s.loading_model == model) return ToSeconds(s.load_end - now);
    if (!s.cache.Contains(model) && s.pending[model] > 0) return load_[model].Mean();
    return 0;
  }
  // Seconds of proxy work ahead of a new request: the rest of the current service, then
  // every request pointed here and not started (a load first when its model is absent).
  double Backlog(int m, TimePoint now) const {
    const MachineState& s = machines_[m];
    double b = s.serving == kNobody ? 0 : std::max(0.0, ToSeconds(s.busy_until - now));
    for (size_t model = 0; model < s.pending.size(); ++model) {
      if (s.pending[model] == 0) continue;
      b += s.pending[model] * infer_[model].Mean();
      if (!s.cache.Contains(static_cast<int>(model))) b += load_[model].Mean();
    }
    return b;
  }
  ModelTimes TimesOf(int model) const {
    return {infer_[model].Mean(), pre_[model].Mean(), post_[model].Mean(), load_[model].Mean()};
  }
  const ClusterConfig& cfg_;
  ClusterPolicy policy_;
  Rng rng_;
  std::vector<MachineState> machines_;
  std::vector<Proc> procs_;
  std::deque<int> waiting_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  std::vector<Learned> infer_, pre_, post_, load_;
  PopularityWindow window_;  // prefetch: the last arrivals' models
  ClusterResult result_;
  // Phased workload progress.
  size_t phase_ = 0;
  int issued_ = 0, exited_in_phase_ = 0;
};

void Simulator::Arrive(int model, TimePoint now) {
  Proc p;
  p.model = model;
  p.arrival = now;
  procs_.push_back(p);
  Push(now, EventType::kArrive, static_cast<int>(procs_.size()) - 1);
}

void Simulator::Refuse(int p, std::string why, TimePoint now) {
  procs_[p].refused = true;
  procs_[p].refusal = std::move(why);
  procs_[p].exit = now;
  procs_[p].spawn = now;
  ++result_.refused;
  OnExit(p, now);
}

std::vector<ProxyState> Simulator::ProxiesFor(int model, TimePoint now) const {
  const bool adaptive = policy_ == ClusterPolicy::kAdaptive || policy_ == ClusterPolicy::kPrefetch;
  std::vector<ProxyState> out(machines_.size());
  for (int m = 0; m < static_cast<int>(machines_.size()); ++m) {
    const MachineState& s = machines_[m];
    ProxyState& p = out[m];
    p.free = Free(m);
    p.can_hold = CanHold(m, model);
    p.holds = Holds(m, model);
    p.idle = s.ongoing == 0 && s.serving == kNobody;
    p.ongoing = s.ongoing;
    p.remaining_load = RemainingLoad(m, model, now);
    p.backlog = adaptive ? Backlog(m, now) : 0;  // the sum over models only where it is read
    p.room_mb = s.cache.capacity_mb() - s.cache.used_mb();
  }
  return out;
}

PlacementChoice Simulator::Decide(int p, TimePoint now) {
  const int model = procs_[p].model;
  const PlacementChoice d =
      DecidePlacement(policy_, ProxiesFor(model, now), TimesOf(model),
                      {cfg_.target_ongoing_requests, ToSeconds(cfg_.network)}, rng_);
  if (d.estimated) {
    // The record keeps the estimates made when the request arrived (its first decision).
    if (!procs_[p].estimated) procs_[p].estimates = d.estimates;
    procs_[p].estimated = true;
    procs_[p].chosen = d.chosen;
  }
  return d;
}

void Simulator::Place(int p, const PlacementChoice& d, TimePoint now) {
  Proc& proc = procs_[p];
  proc.machine = d.machine;
  proc.proxy = d.proxy;
  proc.spawn = now;
  machines_[d.machine].cores_free -= cfg_.workload.proc_cores;
  machines_[d.proxy].ongoing += 1;
  machines_[d.proxy].pending[proc.model] += 1;
  if (policy_ == ClusterPolicy::kAdaptive || policy_ == ClusterPolicy::kPrefetch) {
    if (proc.chosen == ClusterPolicy::kColocation) ++result_.chose_colocation;
    if (proc.chosen == ClusterPolicy::kColocationQueue) ++result_.chose_queue;
    if (proc.chosen == ClusterPolicy::kRegistry) ++result_.chose_registry;
  }
  Push(now + cfg_.workload.pre, EventType::kPreDone, p);
}

void Simulator::Schedule(TimePoint now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const int p = *it;
    const PlacementChoice d = Decide(p, now);
    if (!d.place) {
      ++it;
      continue;
    }
    it = waiting_.erase(it);
    Place(p, d, now);
  }
}

void Simulator::TryServe(int m, TimePoint now) {
  MachineState& s = machines_[m];
  if (s.serving != kNobody || s.proxy_queue.empty()) return;
  const int p = s.proxy_queue.front();
  s.proxy_queue.pop_front();
  const int model = procs_[p].model;
  s.pending[model] -= 1;
  s.serving = p;
  const ClusterModel& spec = cfg_.models[model];
  if (s.cache.Contains(model)) {
    s.cache.Touch(model);
    s.cache.Pin(model);
    s.busy_until = now + spec.infer_time;
    Push(s.busy_until, EventType::kInferDone, m);
    return;
  }
  std::vector<int> evicted;
  if (policy_ == ClusterPolicy::kMultiplexed) {
    while (static_cast<int>(s.cache.size()) >= cfg_.max_models_per_replica &&
           s.cache.EvictLru(&evicted)) {
    }
  }
  if (!s.cache.Insert(model, spec.size_mb, &evicted)) {
    // Placement never points a request at a cache that cannot hold its model; should the
    // memory still be short, the request is refused with the reason, not left stuck.
    s.serving = kNobody;
    machines_[procs_[p].machine].cores_free += cfg_.workload.proc_cores;
    s.ongoing -= 1;
    Refuse(p,
           "machine " + cfg_.machines[m].name + " cannot make room for model " + spec.name + " (" +
               std::to_string(spec.size_mb) + " MB)",
           now);
    TryServe(m, now);
    return;
  }
  result_.evictions += static_cast<int>(evicted.size());
  s.cache.Pin(model);
  procs_[p].cold = true;
  ++result_.cold_starts;
  s.loading_model = model;
  s.load_end = now + spec.load_time;
  s.busy_until = s.load_end + spec.infer_time;
  Push(s.load_end, EventType::kLoadDone, m);
}

void Simulator::MaybePrefetch(int model, TimePoint now) {
  const double share = window_.Add(model);
  const int best = PickPrefetchProxy(ProxiesFor(model, now), share, cfg_.prefetch_min_share);
  if (best == kNobody) return;
  MachineState& s = machines_[best];
  std::vector<int> evicted;
  const ClusterModel& spec = cfg_.models[model];
  if (!s.cache.Insert(model, spec.size_mb, &evicted)) return;
  result_.evictions += static_cast<int>(evicted.size());
  s.cache.Pin(model);
  s.serving = kPrefetchLoad;
  s.prefetch_waited = false;
  s.loading_model = model;
  s.load_end = now + spec.load_time;
  s.busy_until = s.load_end;
  ++result_.prefetch_loads;
  Push(s.load_end, EventType::kLoadDone, best);
}

void Simulator::OnExit(int p, TimePoint now) {
  const ClusterWorkload& w = cfg_.workload;
  if (w.kind != ClusterWorkload::Kind::kPhases || phase_ >= w.phases.size()) return;
  const WorkloadPhase& ph = w.phases[phase_];
  ++exited_in_phase_;
  (void)p;
  if (exited_in_phase_ == ph.count) {
    ++phase_;
    issued_ = exited_in_phase_ = 0;
    if (phase_ < w.phases.size()) {
      const WorkloadPhase& next = w.phases[phase_];
      const int n = next.concurrent ? next.count : 1;
      for (int i = 0; i < n; ++i) Arrive(next.model, now);
      issued_ = n;
    }
  } else if (!ph.concurrent && issued_ < ph.count) {
    Arrive(ph.model, now);
    ++issued_;
  }
}

ClusterResult Simulator::Run() {
  result_.policy = policy_;
  const ClusterWorkload& w = cfg_.workload;
  if (w.kind == ClusterWorkload::Kind::kPhases) {
    if (!w.phases.empty()) {
      const WorkloadPhase& first = w.phases[0];
      const int n = first.concurrent ? first.count : 1;
      for (int i = 0; i < n; ++i) Arrive(first.model, kTimeZero);
      issued_ = n;
    }
  } else {
    Rng arrivals = MakeRng(cfg_.seed, "cluster-arrivals");
    std::vector<double> cdf;
    double total = 0;
    for (size_t k = 0; k < cfg_.models.size(); ++k) {
      total += 1.0 / std::pow(static_cast<double>(k + 1), w.zipf_s);
      cdf.push_back(total);
    }
    double t = 0;
    for (int i = 0; i < w.requests; ++i) {
      t += -std::log(1.0 - Uniform01(arrivals)) / w.rate_qps;
      const double u = Uniform01(arrivals) * total;
      const int model = static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      Arrive(std::min(model, static_cast<int>(cfg_.models.size()) - 1), kTimeZero + SecondsF(t));
    }
  }

  while (!events_.empty()) {
    const Event e = events_.top();
    events_.pop();
    const TimePoint now = e.at;
    switch (e.type) {
      case EventType::kArrive: {
        const int model = procs_[e.who].model;
        bool anywhere = false;
        for (int m = 0; m < static_cast<int>(machines_.size()); ++m) {
          anywhere = anywhere || CanHold(m, model);
        }
        if (!anywhere) {
          Refuse(e.who,
                 "model " + cfg_.models[model].name + " is larger than every machine's cache", now);
          break;
        }
        if (policy_ == ClusterPolicy::kPrefetch) MaybePrefetch(model, now);
        waiting_.push_back(e.who);
        Schedule(now);
        break;
      }
      case EventType::kPreDone: {
        const Proc& p = procs_[e.who];
        Push(p.proxy == p.machine ? now : now + cfg_.network, EventType::kAtProxy, e.who);
        break;
      }
      case EventType::kAtProxy: {
        MachineState& s = machines_[procs_[e.who].proxy];
        // Waiting for a load ahead of demand of its model is a (shorter) cold start:
        // counted once per load, and the request is marked cold.
        if (s.serving == kPrefetchLoad && s.loading_model == procs_[e.who].model) {
          procs_[e.who].cold = true;
          if (!s.prefetch_waited) ++result_.cold_starts;
          s.prefetch_waited = true;
        }
        s.proxy_queue.push_back(e.who);
        TryServe(procs_[e.who].proxy, now);
        break;
      }
      case EventType::kLoadDone: {
        MachineState& s = machines_[e.who];
        const int model = s.loading_model;
        s.loading_model = kNobody;
        load_[model].Add(ToSeconds(cfg_.models[model].load_time));
        if (s.serving == kPrefetchLoad) {
          s.cache.Unpin(model);
          s.serving = kNobody;
          TryServe(e.who, now);
          Schedule(now);
        } else {
          Push(now + cfg_.models[model].infer_time, EventType::kInferDone, e.who);
        }
        break;
      }
      case EventType::kInferDone: {
        MachineState& s = machines_[e.who];
        const int p = s.serving;
        const int model = procs_[p].model;
        s.cache.Unpin(model);
        s.serving = kNobody;
        infer_[model].Add(ToSeconds(cfg_.models[model].infer_time));
        Push(now + w.post, EventType::kExit, p);
        TryServe(e.who, now);
        break;
      }
      case EventType::kExit: {
        Proc& p = procs_[e.who];
        p.exit = now;
        machines_[p.machine].cores_free += w.proc_cores;
        machines_[p.proxy].ongoing -= 1;
        pre_[p.model].Add(ToSeconds(w.pre));
        post_[p.model].Add(ToSeconds(w.post));
        OnExit(e.who, now);
        Schedule(now);
        break;
      }
    }
  }

  std::vector<double> latencies;
  double first = 0, last = 0;
  for (size_t i = 0; i < procs_.size(); ++i) {
    const Proc& p = procs_[i];
    ClusterRequestRecord r;
    r.id = static_cast<int>(i);
    r.model = p.model;
    r.machine = p.machine;
    r.proxy = p.proxy;
    r.cold = p.cold;
    r.refused = p.refused;
    r.refusal = p.refusal;
    r.arrival_s = ToSeconds(p.arrival.time_since_epoch());
    r.spawn_s = ToSeconds(p.spawn.time_since_epoch());
    r.exit_s = ToSeconds(p.exit.time_since_epoch());
    r.estimates = p.estimates;
    r.chosen = p.chosen;
    if (i == 0 || r.arrival_s < first) first = r.arrival_s;
    last = std::max(last, r.exit_s);
    if (!p.refused) latencies.push_back(r.latency_s());
    result_.records.push_back(std::move(r));
  }
  result_.requests = static_cast<int>(procs_.size());
  result_.makespan_s = last - first;
  if (!latencies.empty()) {
    double sum = 0;
    for (double l : latencies) sum += l;
    result_.mean_latency_s = sum / static_cast<double>(latencies.size());
    std::sort(latencies.begin(), latencies.end());
    auto q = [&](double f) {
      return latencies[std::min(latencies.size() - 1,
                                static_cast<size_t>(f * static_cast<double>(latencies.size())))];
    };
    result_.p50_latency_s = q(0.5);
    result_.p99_latency_s = q(0.99);
  }
  return std::move(result_);
}

}  // namespace

StatusOr<ClusterResult> RunCluster(const ClusterConfig& config, ClusterPolicy policy) {
  RETURN_IF_ERROR(ValidateCluster(config));
  Simulator sim(config, policy);
  return sim.Run();
}

}  // namespace sloserve
