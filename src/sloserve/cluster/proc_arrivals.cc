#include "sloserve/cluster/proc_arrivals.h"

#include <algorithm>
#include <cmath>

#include "sloserve/core/rng.h"

namespace sloserve {
namespace {

constexpr int kNobody = -1;
// A query's SLO in the engine: the experiments have none (nothing expires or is shed).
constexpr Duration kNoSlo = Seconds(1'000'000'000);

}  // namespace

ProcArrivals::ProcArrivals(const ClusterConfig& c, ClusterPolicy p, ProxyExecutor* executor,
                           DirectedPlacement* placement)
    : cfg_(c),
      policy_(p),
      executor_(executor),
      placement_(placement),
      rng_(MakeRng(c.seed, "cluster-placement")),
      window_(c.prefetch_window) {
  for (const ClusterMachine& m : c.machines) {
    Machine s;
    s.cores_free = m.cores;
    s.unstarted.assign(c.models.size(), 0);
    machines_.push_back(std::move(s));
  }
  for (const ClusterModel& m : c.models) {
    const ClusterWorkload& w = c.workload;
    infer_.push_back({ToSeconds(m.infer_time), 1});
    pre_.push_back({ToSeconds(w.pre), 1});
    post_.push_back({ToSeconds(w.post), 1});
    load_.push_back({ToSeconds(m.load_time), 1});
  }
  result_.policy = p;
  ProxyExecutor::Observer o;
  o.on_load = [this](const ProxyExecutor::LoadEvent& e) {
    Machine& s = machines_[e.worker];
    const int model = static_cast<int>(e.variant);
    s.loading_model = model;
    s.load_end = e.end;
    Push(e.end, Stage::kLoadDone, static_cast<int>(e.worker), model, next_load_prefetch_);
    if (next_load_prefetch_) {
      next_load_prefetch_ = false;
      s.prefetching = true;
      s.prefetch_waited = false;
      ++result_.prefetch_loads;
      return;
    }
    // A demand load: the batch it is for runs its inference right after it (the engine sends
    // the batch when the load's result is in); its proc starts being served now, cold.
    s.prefetching = false;
    executor_->ExtendBusy(e.worker, e.end + cfg_.models[model].infer_time);
    ++result_.cold_starts;
    Started(e.worker, -1, true);
  };
  o.on_run = [this](const ProxyExecutor::RunEvent& e) {
    for (const Query& q : e.queries) Started(e.worker, static_cast<int>(q.cookie) - 1, false);
  };
  o.on_unload = [this](WorkerId, VariantId) { ++result_.evictions; };
  executor_->set_observer(std::move(o));

  const ClusterWorkload& w = c.workload;
  if (w.kind == ClusterWorkload::Kind::kPhases) {
    if (!w.phases.empty()) {
      const WorkloadPhase& first = w.phases[0];
      const int n = first.concurrent ? first.count : 1;
      for (int i = 0; i < n; ++i) Arrive(first.model, kTimeZero);
      issued_ = n;
    }
    return;
  }
  // Zipf: Poisson arrivals, model of rank k with probability proportional to 1/(k+1)^s.
  Rng arrivals = MakeRng(c.seed, "cluster-arrivals");
  std::vector<double> cdf;
  double total = 0;
  for (size_t k = 0; k < c.models.size(); ++k) {
    total += 1.0 / std::pow(static_cast<double>(k + 1), w.zipf_s);
    cdf.push_back(total);
  }
  double t = 0;
  for (int i = 0; i < w.requests; ++i) {
    t += -std::log(1.0 - Uniform01(arrivals)) / w.rate_qps;
    const double u = Uniform01(arrivals) * total;
    const int model = static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    Arrive(std::min(model, static_cast<int>(c.models.size()) - 1), kTimeZero + SecondsF(t));
  }
}

void ProcArrivals::Arrive(int model, TimePoint now) {
  Proc p;
  p.model = model;
  p.arrival = now;
  procs_.push_back(p);
  Push(now, Stage::kArrive, static_cast<int>(procs_.size()) - 1);
}

// The engine forms a worker's batch from the head of its queue (first come first served,
// one request a batch): a demand load is for its first submitted proc not started.
void ProcArrivals::Started(WorkerId w, int p, bool cold) {
  Machine& s = machines_[w];
  if (p < 0) {
    if (s.at_proxy.empty()) return;
    p = s.at_proxy.front();
  }
  if (p >= static_cast<int>(procs_.size()) || procs_[p].started) return;
  auto it = std::find(s.at_proxy.begin(), s.at_proxy.end(), p);
  if (it == s.at_proxy.end()) return;
  s.at_proxy.erase(it);
  procs_[p].started = true;
  s.unstarted[procs_[p].model] -= 1;
  if (cold) procs_[p].cold = true;
}

bool ProcArrivals::Contains(int m, int model) const {
  const WorkerView& w = engine_->workers()[m];
  return w.residency[model] == Residency::kReady || w.residency[model] == Residency::kLoading;
}

// Seconds of proxy work ahead of a new request: the rest of what it is doing, then every
// request pointed here and not started (a load first when its model is absent).
double ProcArrivals::Backlog(int m, TimePoint now) const {
  const Machine& s = machines_[m];
  double b = std::max(0.0, ToSeconds(executor_->busy_until(static_cast<WorkerId>(m)) - now));
  for (size_t model = 0; model < s.unstarted.size(); ++model) {
    if (s.unstarted[model] == 0) continue;
    b += s.unstarted[model] * infer_[model].Mean();
    if (!Contains(m, static_cast<int>(model))) b += load_[model].Mean();
  }
  return b;
}

std::vector<ProxyState> ProcArrivals::ProxiesFor(int model, TimePoint now) const {
  const bool adaptive = policy_ == ClusterPolicy::kAdaptive || policy_ == ClusterPolicy::kPrefetch;
  std::vector<ProxyState> out(machines_.size());
  for (int m = 0; m < static_cast<int>(machines_.size()); ++m) {
    const Machine& s = machines_[m];
    const double cache = cfg_.machines[m].cache_mb;
    ProxyState& p = out[m];
    const bool contains = Contains(m, model);
    p.free = s.cores_free >= cfg_.workload.proc_cores;
    p.can_hold = cfg_.models[model].size_mb <= cache;
    p.holds = contains || s.unstarted[model] > 0;
    p.idle = s.ongoing == 0 && executor_->busy_until(static_cast<WorkerId>(m)) <= now;
    p.ongoing = s.ongoing;
    if (s.loading_model == model) {
      p.remaining_load = ToSeconds(s.load_end - now);
    } else if (!contains && s.unstarted[model] > 0) {
      p.remaining_load = load_[model].Mean();
    }
    p.backlog = adaptive ? Backlog(m, now) : 0;  // the sum over models only where it is read
    p.room_mb = cache - engine_->machines()[engine_->workers()[m].machine].used_mb;
  }
  return out;
}

void ProcArrivals::Place(int p, const PlacementChoice& d, TimePoint now) {
  Proc& proc = procs_[p];
  proc.machine = d.machine;
  proc.proxy = d.proxy;
  proc.spawn = now;
  machines_[d.machine].cores_free -= cfg_.workload.proc_cores;
  machines_[d.proxy].ongoing += 1;
  machines_[d.proxy].unstarted[proc.model] += 1;
  if (policy_ == ClusterPolicy::kAdaptive || policy_ == ClusterPolicy::kPrefetch) {
    if (proc.chosen == ClusterPolicy::kColocation) ++result_.chose_colocation;
    if (proc.chosen == ClusterPolicy::kColocationQueue) ++result_.chose_queue;
    if (proc.chosen == ClusterPolicy::kRegistry) ++result_.chose_registry;
  }
  Push(now + cfg_.workload.pre, Stage::kPreDone, p);
}

void ProcArrivals::Schedule(TimePoint now) {
  const PlacementParams params{cfg_.target_ongoing_requests, ToSeconds(cfg_.network),
                               cfg_.registry_spawn_random};
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const int p = *it;
    const int model = procs_[p].model;
    const PlacementChoice d =
        DecidePlacement(policy_, ProxiesFor(model, now), TimesOf(model), params, rng_);
    // The policy that placed it (the fixed policy itself, or adaptive's choice); the
    // record keeps the estimates made when the request arrived (its first decision).
    procs_[p].chosen = d.chosen;
    if (d.estimated && !procs_[p].estimated) {
      procs_[p].estimates = d.estimates;
      procs_[p].estimated = true;
    }
    if (!d.place) {
      ++it;
      continue;
    }
    it = waiting_.erase(it);
    Place(p, d, now);
  }
}

void ProcArrivals::AtProxy(int p, TimePoint now) {
  Proc& proc = procs_[p];
  Machine& s = machines_[proc.proxy];
  // Waiting for a load ahead of demand of its model is a (shorter) cold start: counted
  // once per load, and the request is marked cold.
  if (s.prefetching && s.loading_model == proc.model) {
    proc.cold = true;
    if (!s.prefetch_waited) ++result_.cold_starts;
    s.prefetch_waited = true;
  }
  s.at_proxy.push_back(p);
  Query q;
  q.task = static_cast<TaskId>(proc.model);
  q.cookie = static_cast<uint64_t>(p) + 1;
  q.deadline = now + kNoSlo;
  placement_->set_next(static_cast<WorkerId>(proc.proxy));
  engine_->Submit(q, now);
}

void ProcArrivals::MaybePrefetch(int model, TimePoint now) {
  const double share = window_.Add(model);
  const int best = PickPrefetchProxy(ProxiesFor(model, now), share, cfg_.prefetch_min_share);
  if (best == kNobody) return;
  next_load_prefetch_ = true;
  engine_->RequestLoad(static_cast<WorkerId>(best), static_cast<VariantId>(model), now);
  next_load_prefetch_ = false;
}

void ProcArrivals::OnRecord(const QueryRecord& r) {
  const int p = static_cast<int>(r.cookie) - 1;
  if (p < 0 || p >= static_cast<int>(procs_.size())) return;
  Proc& proc = procs_[p];
  if (r.dropped) {
    // Nothing expires here; should the engine still drop it (a refused decision), the
    // request is refused with the reason rather than left waiting.
    Machine& s = machines_[proc.proxy];
    auto it = std::find(s.at_proxy.begin(), s.at_proxy.end(), p);
    if (it != s.at_proxy.end()) {
      s.at_proxy.erase(it);
      s.unstarted[proc.model] -= 1;
    }
    machines_[proc.machine].cores_free += cfg_.workload.proc_cores;
    s.ongoing -= 1;
    Refuse(p, std::string("dropped by the engine: ") + DropReasonName(r.drop_reason), r.finish);
    return;
  }
  infer_[proc.model].Add(ToSeconds(cfg_.models[proc.model].infer_time));
  Push(r.finish + cfg_.workload.post, Stage::kExit, p);
}

void ProcArrivals::Refuse(int p, std::string why, TimePoint now) {
  procs_[p].refused = true;
  procs_[p].refusal = std::move(why);
  procs_[p].exit = now;
  procs_[p].spawn = now;
  ++result_.refused;
  NextOfPhase(now);
}

void ProcArrivals::Exit(int p, TimePoint now) {
  Proc& proc = procs_[p];
  proc.exit = now;
  machines_[proc.machine].cores_free += cfg_.workload.proc_cores;
  machines_[proc.proxy].ongoing -= 1;
  pre_[proc.model].Add(ToSeconds(cfg_.workload.pre));
  post_[proc.model].Add(ToSeconds(cfg_.workload.post));
  NextOfPhase(now);
  Schedule(now);
}

void ProcArrivals::NextOfPhase(TimePoint now) {
  const ClusterWorkload& w = cfg_.workload;
  if (w.kind != ClusterWorkload::Kind::kPhases || phase_ >= w.phases.size()) return;
  const WorkloadPhase& ph = w.phases[phase_];
  ++exited_in_phase_;
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

TimePoint ProcArrivals::NextArrival() const {
  return items_.empty() ? kTimeInfinite : items_.top().at;
}

void ProcArrivals::AdmitNext(Engine& engine, TimePoint now) {
  engine_ = &engine;
  const Item item = items_.top();
  items_.pop();
  switch (item.stage) {
    case Stage::kArrive: {
      const int model = procs_[item.who].model;
      bool anywhere = false;
      for (const ClusterMachine& m : cfg_.machines) {
        anywhere = anywhere || cfg_.models[model].size_mb <= m.cache_mb;
      }
      if (!anywhere) {
        Refuse(item.who,
               "model " + cfg_.models[model].name + " is larger than every machine's cache", now);
        break;
      }
      if (policy_ == ClusterPolicy::kPrefetch) MaybePrefetch(model, now);
      waiting_.push_back(item.who);
      Schedule(now);
      break;
    }
    case Stage::kPreDone: {
      const Proc& p = procs_[item.who];
      Push(p.proxy == p.machine ? now : now + cfg_.network, Stage::kAtProxy, item.who);
      break;
    }
    case Stage::kAtProxy:
      AtProxy(item.who, now);
      break;
    case Stage::kLoadDone: {
      Machine& s = machines_[item.who];
      load_[item.model].Add(ToSeconds(cfg_.models[item.model].load_time));
      if (s.loading_model == item.model && s.load_end == now) {
        s.loading_model = kNobody;
        s.prefetching = false;
      }
      if (item.prefetch) Schedule(now);
      break;
    }
    case Stage::kExit:
      Exit(item.who, now);
      break;
  }
}

ClusterResult ProcArrivals::Result() {
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

}  // namespace sloserve
