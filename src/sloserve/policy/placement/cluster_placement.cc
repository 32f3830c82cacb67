#include "sloserve/policy/placement/cluster_placement.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/name_value_list.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

bool HeldOn(const WorkerView& w, VariantId v) {
  return v < w.residency.size() &&
         (w.residency[v] == Residency::kReady || w.residency[v] == Residency::kLoading);
}

}  // namespace

namespace cluster_placement_options {
// Read as numbers and truncated (1.5 workers' worth of requests = 1), as before.
const KeyDecl kTargetOngoingRequests{
    .name = "target_ongoing_requests",
    .type = KeyType::kNumber,
    .default_value = "3",
    .unit = "queries",
    .min = 1,
    .max = 1e6,
    .help =
        "the registry's bound: a warm worker with this many ongoing queries is passed over "
        "(also multiplexed's)"};
const KeyDecl kNetworkS{.name = "network_s",
                        .type = KeyType::kNumber,
                        .default_value = "0",
                        .unit = "s",
                        .min = 0,
                        .max = 3600,
                        .help = "transfer time in registry's latency estimate (serve adds none)"};
const KeyDecl kCacheMb{.name = "cache_mb",
                       .type = KeyType::kNumber,
                       .default_value = "0",
                       .unit = "MB",
                       .min = 0,
                       .max = 1e9,
                       .help = "a worker's model cache, LRU beyond it; 0 = its machine's memory"};
const KeyDecl kPrefetchWindow{.name = "prefetch_window",
                              .type = KeyType::kNumber,
                              .default_value = "50",
                              .unit = "queries",
                              .min = 1,
                              .max = 1e6,
                              .help = "prefetch: arrivals in the popularity window"};
const KeyDecl kPrefetchMinShare{.name = "prefetch_min_share",
                                .type = KeyType::kNumber,
                                .default_value = "0.1",
                                .min = 0,
                                .max = 1,
                                .min_exclusive = true,
                                .help =
                                    "prefetch: share of the window from which a model is "
                                    "loaded ahead of demand"};
const KeyDecl kMaxModelsPerReplica{.name = "max_models_per_replica",
                                   .type = KeyType::kNumber,
                                   .default_value = "3",
                                   .min = 1,
                                   .max = 1e6,
                                   .help =
                                       "multiplexed: models resident on a worker at most (LRU "
                                       "beyond)"};
}  // namespace cluster_placement_options

const char* ClusterPlacementSummary(ClusterPolicy policy) {
  switch (policy) {
    case ClusterPolicy::kRandom:
      return "the thesis' default: a random free worker, whatever it holds";
    case ClusterPolicy::kColocation:
      return "an idle worker holding the model, else start it cold on a random idle one";
    case ClusterPolicy::kColocationQueue:
      return "an idle worker holding the model, else queue at the warm one (no cold start)";
    case ClusterPolicy::kRegistry:
      return "the first warm worker under target_ongoing_requests, else cold locally";
    case ClusterPolicy::kAdaptive:
      return "per query the least of the thesis' three latency estimates (live means)";
    case ClusterPolicy::kPrefetch:
      return "adaptive, and loads popular models on idle workers ahead of demand";
    case ClusterPolicy::kMultiplexed:
      return "Ray Serve multiplexing: model-id routing, LRU of max_models_per_replica";
  }
  return "";
}

StatusOr<std::unique_ptr<PlacementPolicy>> ClusterPlacement::Create(ClusterPolicy policy,
                                                                    const PolicyParams& p) {
  Options o;
  namespace opt = cluster_placement_options;
  ASSIGN_OR_RETURN(o.model_name, p.GetString(kWarmVariantOption));
  ASSIGN_OR_RETURN(double target, p.GetDouble(opt::kTargetOngoingRequests));
  o.target_ongoing_requests = static_cast<int>(target);
  ASSIGN_OR_RETURN(o.network_s, p.GetDouble(opt::kNetworkS));
  ASSIGN_OR_RETURN(o.cache_mb, p.GetDouble(opt::kCacheMb));
  ASSIGN_OR_RETURN(double window, p.GetDouble(opt::kPrefetchWindow));
  o.prefetch_window = static_cast<int>(window);
  ASSIGN_OR_RETURN(o.prefetch_min_share, p.GetDouble(opt::kPrefetchMinShare));
  ASSIGN_OR_RETURN(double k, p.GetDouble(opt::kMaxModelsPerReplica));
  o.max_models_per_replica = static_cast<int>(k);
  return std::unique_ptr<PlacementPolicy>(new ClusterPlacement(policy, std::move(o)));
}

Status ClusterPlacement::Init(const PolicyContext& ctx) {
  suite_ = ctx.suite;
  const char* name = ClusterPolicyName(policy_);
  task_model_.assign(suite_->tasks().size(), kNoId);
  for (TaskId t = 0; t < suite_->tasks().size(); ++t) {
    const std::vector<VariantId> vs = suite_->VariantsOfTask(t);
    if (!vs.empty()) task_model_[t] = vs.front();
  }
  // One name: the model of every query. Several: one per task (a multi-model pool whose
  // selection runs a chosen variant per model, e.g. `fixed`'s `variant` list).
  const std::vector<std::string> names = ListItems(opt_.model_name);
  std::vector<bool> named(suite_->tasks().size(), false);
  for (const std::string& item : names) {
    auto v = suite_->FindVariant(item);
    if (!v) {
      return NotFoundError(std::string(name) + ": unknown variant '" + item +
                           "' (option warm_variant)");
    }
    if (names.size() == 1) {
      opt_.fixed_model = *v;
      break;
    }
    const TaskId t = suite_->variants()[*v].task;
    if (named[t]) {
      return InvalidArgumentError(std::string(name) +
                                  ": option warm_variant names two variants of task '" +
                                  suite_->tasks()[t].name + "'");
    }
    named[t] = true;
    task_model_[t] = *v;
  }
  rng_ = MakeRng(ctx.seed, std::string("placement/") + name);
  window_ = PopularityWindow(opt_.prefetch_window);
  eligibility_.Init(suite_);
  const HardwareId first = ctx.workers.empty() ? 0 : ctx.workers.front().hardware;
  const size_t nv = suite_->variants().size();
  infer_.assign(nv, {});
  load_.assign(nv, {});
  for (VariantId v = 0; v < nv; ++v) {
    // The first worker's type, or (mixed pools) the first worker's type that profiles it.
    HardwareId hw = first;
    for (size_t i = 0; i < ctx.workers.size() && suite_->MaxBatch(hw, v) <= 0; ++i)
      hw = ctx.workers[i].hardware;
    const LatencyDistribution* l = suite_->Latency(hw, v, 1);
    infer_[v].Add(l && !l->empty() ? ToSeconds(l->Quantile(0.5)) : 0);
    load_[v].Add(ToSeconds(suite_->variants()[v].load_time));
  }
  // A model that no worker's cache could ever hold is a configuration error, named here.
  std::vector<VariantId> models;
  if (opt_.fixed_model != kNoId) {
    models.push_back(opt_.fixed_model);
  } else if (ctx.task < task_model_.size() && task_model_[ctx.task] != kNoId) {
    models.push_back(task_model_[ctx.task]);
  }
  double largest = 0;
  for (const WorkerView& w : ctx.workers) largest = std::max(largest, CacheMb(w, ctx.machines));
  for (VariantId m : models) {
    const double mb = suite_->variants()[m].memory_mb;
    if (!ctx.workers.empty() && mb > largest) {
      return InvalidArgumentError(std::string(name) + ": model " + suite_->variants()[m].name +
                                  " (" + std::to_string(mb) +
                                  " MB) is larger than every worker's model cache (largest " +
                                  std::to_string(largest) + " MB)");
    }
  }
  return OkStatus();
}

VariantId ClusterPlacement::ModelOf(const Query& q) const {
  if (opt_.fixed_model != kNoId) return opt_.fixed_model;
  return q.task < task_model_.size() ? task_model_[q.task] : kNoId;
}

double ClusterPlacement::CacheMb(const WorkerView& w,
                                 const std::vector<MachineView>& machines) const {
  if (opt_.cache_mb > 0) return opt_.cache_mb;
  const double mem = w.machine < machines.size() ? machines[w.machine].memory_mb : 0;
  return mem > 0 ? mem : std::numeric_limits<double>::infinity();
}

double ClusterPlacement::HeldMb(const WorkerView& w) const {
  double mb = 0;
  for (VariantId v = 0; v < w.residency.size(); ++v) {
    if (HeldOn(w, v)) mb += suite_->variants()[v].memory_mb;
  }
  return mb;
}

std::vector<uint64_t>& ClusterPlacement::Row(std::vector<std::vector<uint64_t>>* table,
                                             WorkerId w) {
  if (table->size() <= w) table->resize(w + 1);
  std::vector<uint64_t>& row = (*table)[w];
  if (row.size() < suite_->variants().size()) row.resize(suite_->variants().size(), 0);
  return row;
}

uint64_t ClusterPlacement::Cell(const std::vector<std::vector<uint64_t>>& table, WorkerId w,
                                VariantId v) const {
  return w < table.size() && v < table[w].size() ? table[w][v] : 0;
}

ModelTimes ClusterPlacement::TimesOf(VariantId v) const {
  // serve has no CPU pre/post-processing stage of its own: T_p = 0.
  return {infer_[v].Mean(), 0, 0, load_[v].Mean()};
}

std::vector<ProxyState> ClusterPlacement::Proxies(VariantId model, TaskId task,
                                                  const std::vector<WorkerView>& workers,
                                                  const std::vector<MachineView>& machines,
                                                  TimePoint now) {
  const bool adaptive = policy_ == ClusterPolicy::kAdaptive || policy_ == ClusterPolicy::kPrefetch;
  const double size = suite_->variants()[model].memory_mb;
  std::vector<ProxyState> out(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerView& w = workers[i];
    std::vector<uint64_t>& pending = Row(&pending_, w.id);
    // Queries dropped at a worker (expired, shed) never complete: an empty worker has none.
    if (!w.busy && w.queue_length == 0) std::fill(pending.begin(), pending.end(), 0);
    if (!eligibility_.Eligible(w, task)) continue;  // never a target
    ProxyState& p = out[i];
    const double cache = CacheMb(w, machines);
    const bool resident = HeldOn(w, model);
    p.free = !w.busy && w.queue_length == 0;
    p.can_hold = size <= cache;
    p.holds = resident || pending[model] > 0;
    p.idle = p.free;
    p.ongoing = static_cast<int>(w.queue_length) + (w.busy ? 1 : 0);
    const double busy_left = w.busy ? std::max(0.0, ToSeconds(w.busy_until - now)) : 0;
    if (model < w.residency.size() && w.residency[model] == Residency::kLoading) {
      // A cold batch's busy_until is its load's end; a prefetch leaves the worker idle.
      p.remaining_load = w.busy && w.last_variant == model ? busy_left : load_[model].Mean();
    } else if (!resident && pending[model] > 0) {
      p.remaining_load = load_[model].Mean();
    }
    p.room_mb = std::isinf(cache) ? std::numeric_limits<double>::max() : cache - HeldMb(w);
    if (!adaptive) continue;
    // The proxy's work ahead of a new query: the rest of its batch, then every query placed
    // here and not started (a load first for each absent model).
    p.backlog = busy_left;
    for (VariantId v = 0; v < pending.size(); ++v) {
      uint64_t queued = pending[v];
      if (w.busy && w.last_variant == v && queued > 0) --queued;  // the running one
      if (queued == 0) continue;
      p.backlog += static_cast<double>(queued) * infer_[v].Mean();
      if (!HeldOn(w, v)) p.backlog += load_[v].Mean();
    }
  }
  return out;
}

std::vector<VariantId> ClusterPlacement::Evictions(const WorkerView& w, VariantId model,
                                                   const std::vector<MachineView>& machines) const {
  std::vector<VariantId> out;
  if (HeldOn(w, model)) return out;
  std::vector<VariantId> victims;  // ready, not running, least recently used first
  int held = 0;
  for (VariantId v = 0; v < w.residency.size(); ++v) {
    if (!HeldOn(w, v)) continue;
    ++held;
    const bool running = w.busy && w.last_variant == v;
    if (w.residency[v] == Residency::kReady && !running && v != w.pinned) victims.push_back(v);
  }
  std::stable_sort(victims.begin(), victims.end(), [&](VariantId a, VariantId b) {
    return Cell(last_use_, w.id, a) < Cell(last_use_, w.id, b);
  });
  const double cache = CacheMb(w, machines);
  double mb = HeldMb(w) + suite_->variants()[model].memory_mb;
  for (VariantId v : victims) {
    const bool over_k =
        policy_ == ClusterPolicy::kMultiplexed && held >= opt_.max_models_per_replica;
    if (!over_k && mb <= cache) break;
    out.push_back(v);
    --held;
    mb -= suite_->variants()[v].memory_mb;
  }
  return out;
}

PlacementDecision ClusterPlacement::Place(const Query& q, const std::vector<WorkerView>& workers,
                                          const std::vector<MachineView>& machines, TimePoint now) {
  PlacementDecision d;
  const VariantId model = ModelOf(q);
  if (model == kNoId || workers.empty()) return d;
  std::vector<ProxyState> proxies = Proxies(model, q.task, workers, machines, now);
  if (policy_ == ClusterPolicy::kPrefetch) {
    const double share = window_.Add(static_cast<int>(model));
    const int target = PickPrefetchProxy(proxies, share, opt_.prefetch_min_share);
    if (target >= 0) {
      d.prefetch_worker = workers[target].id;
      d.prefetch_variant = model;
      // As the simulator sees it after the load starts: the proxy holds the model.
      ProxyState& p = proxies[target];
      p.holds = true;
      p.idle = false;
      p.remaining_load = p.backlog = load_[model].Mean();
    }
  }
  last_ = DecidePlacement(policy_, proxies, TimesOf(model),
                          {opt_.target_ongoing_requests, opt_.network_s}, rng_);
  int pick = last_.place ? last_.proxy : -1;
  if (pick < 0) {
    // The engine has no central queue to hold a query in: where the simulator would wait,
    // the query waits in a worker's queue instead, the warm one that frees first (with
    // queuing), else the least loaded one that can hold the model.
    double best = 0;
    for (int i = 0; i < static_cast<int>(proxies.size()); ++i) {
      const ProxyState& p = proxies[i];
      if (!eligibility_.Eligible(workers[i], q.task) || !p.can_hold) continue;
      const double wait =
          (p.holds ? 0 : 1e12) + p.remaining_load + p.ongoing * TimesOf(model).infer;
      if (pick < 0 || wait < best) {
        pick = i;
        best = wait;
      }
    }
  }
  if (pick < 0) return d;  // no active worker can hold it: the dispatch policy decides
  const WorkerView& w = workers[pick];
  d.worker = w.id;
  d.unload = Evictions(w, model, machines);
  Row(&pending_, w.id)[model] += 1;
  Row(&last_use_, w.id)[model] = ++clock_;
  return d;
}

void ClusterPlacement::OnLoadComplete(WorkerId w, VariantId v, Duration took, TimePoint now) {
  if (v >= load_.size()) return;
  load_[v].Add(ToSeconds(took));
  if (load_done_.size() <= w) load_done_.resize(w + 1, kTimeZero);
  load_done_[w] = now;
}

void ClusterPlacement::OnBatchComplete(const BatchCompletion& c) {
  if (c.variant >= infer_.size()) return;
  // A cold batch's duration includes its load: its inference starts at the load's end.
  TimePoint start = c.now - c.duration;
  if (c.worker < load_done_.size()) start = std::max(start, load_done_[c.worker]);
  infer_[c.variant].Add(ToSeconds(c.now - start));
  std::vector<uint64_t>& pending = Row(&pending_, c.worker);
  const uint64_t n = c.requests.size();
  pending[c.variant] -= std::min(pending[c.variant], n);
  Row(&last_use_, c.worker)[c.variant] = ++clock_;
}

}  // namespace sloserve
