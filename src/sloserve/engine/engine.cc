#include "sloserve/engine/engine.h"

#include <algorithm>
#include <cassert>

namespace sloserve {

StatusOr<std::unique_ptr<Engine>> Engine::Create(const ProfileSuite* suite,
                                                 std::vector<WorkerSpec> workers,
                                                 EnginePolicies policies, ExecutorPort* executor,
                                                 EngineOptions options, uint64_t seed) {
  if (!suite) return InvalidArgumentError("engine: no profile suite");
  if (!executor) return InvalidArgumentError("engine: no executor");
  if (workers.empty()) return InvalidArgumentError("engine: 'workers' must be at least 1");
  if (!policies.dispatch) return InvalidArgumentError("engine: no dispatch policy");
  if (!policies.batching) return InvalidArgumentError("engine: no batching policy");
  if (policies.placement && policies.dispatch->shared_queue()) {
    return InvalidArgumentError(
        "a placement policy routes queries to worker queues, which the shared dispatch never "
        "reads: use it with round_robin, jsq or central");
  }
  if (options.series_interval <= Duration(0)) {
    return InvalidArgumentError("engine: series interval must be positive");
  }
  std::unique_ptr<Engine> e(new Engine(suite, std::move(policies), executor, options));
  const size_t num_variants = suite->variants().size();
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerSpec& spec = workers[i];
    if (spec.hardware >= suite->hardware().size()) {
      return InvalidArgumentError("engine: worker '" + spec.name + "' has unknown hardware");
    }
    WorkerView v;
    v.id = static_cast<WorkerId>(i);
    v.hardware = spec.hardware;
    v.name = spec.name.empty() ? "w" + std::to_string(i) : spec.name;
    v.loaded.assign(num_variants, false);
    if (!spec.preload_none) {
      if (spec.preload.empty()) {
        for (VariantId var = 0; var < num_variants; ++var) {
          v.loaded[var] = !suite->BatchSizes(spec.hardware, var).empty();
        }
      } else {
        for (VariantId var : spec.preload) {
          if (var >= num_variants)
            return InvalidArgumentError("engine: preload of unknown variant");
          v.loaded[var] = true;
        }
      }
    }
    e->views_.push_back(std::move(v));
    WorkerState st;
    st.lru.assign(num_variants, 0);
    e->states_.push_back(std::move(st));
    const HardwareSpec& hw = suite->hardware()[spec.hardware];
    e->active_price_per_hour_ += hw.price_per_hour;
    e->active_cores_ += hw.cores;
  }
  for (const VariantSpec& v : suite->variants()) e->variant_accuracy_.push_back(v.accuracy);

  PolicyContext ctx;
  ctx.suite = suite;
  ctx.workers = e->views_;
  ctx.seed = seed;
  ctx.task = options.task;
  ctx.slo = options.slo;
  ctx.run_offline = options.run_offline;
  ctx.progress = options.progress;
  RETURN_IF_ERROR(e->policies_.dispatch->Init(ctx).WithPrefix("dispatch policy"));
  RETURN_IF_ERROR(e->policies_.batching->Init(ctx).WithPrefix("batching policy"));
  if (e->policies_.placement) {
    RETURN_IF_ERROR(e->policies_.placement->Init(ctx).WithPrefix("placement policy"));
  }
  if (e->policies_.planning) {
    RETURN_IF_ERROR(e->policies_.planning->Init(ctx).WithPrefix("planning policy"));
  }
  return e;
}

Engine::Engine(const ProfileSuite* suite, EnginePolicies policies, ExecutorPort* executor,
               EngineOptions options)
    : suite_(suite),
      policies_(std::move(policies)),
      executor_(executor),
      options_(options),
      metrics_(options.series_interval) {}

uint32_t Engine::AllocSlot(const Query& q) {
  if (!free_slots_.empty()) {
    uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    table_[s] = q;
    return s;
  }
  table_.push_back(q);
  return static_cast<uint32_t>(table_.size() - 1);
}

bool Engine::InsertByDeadline(std::deque<uint32_t>* queue, uint32_t slot,
                              const std::vector<Query>& table) {
  // Deadlines mostly arrive in order: search from the back.
  const Query& q = table[slot];
  auto it = queue->end();
  while (it != queue->begin()) {
    const Query& prev = table[*(it - 1)];
    if (prev.deadline < q.deadline || (prev.deadline == q.deadline && prev.id < q.id)) break;
    --it;
  }
  const bool at_back = it == queue->end();
  queue->insert(it, slot);
  return at_back;
}

void Engine::RemovePositions(std::deque<uint32_t>* queue, const std::vector<uint32_t>& ascending,
                             std::vector<uint32_t>* removed) {
  removed->clear();
  if (ascending.empty()) return;
  bool prefix = ascending.back() + 1 == ascending.size();
  if (prefix) {  // the common case: the front of the queue
    for (size_t i = 0; i < ascending.size(); ++i) {
      removed->push_back(queue->front());
      queue->pop_front();
    }
    return;
  }
  for (uint32_t p : ascending) removed->push_back((*queue)[p]);
  size_t out = 0, next = 0;
  for (size_t i = 0; i < queue->size(); ++i) {
    if (next < ascending.size() && ascending[next] == i) {
      ++next;
      continue;
    }
    (*queue)[out++] = (*queue)[i];
  }
  queue->resize(out);
}

void Engine::SyncQueueView(WorkerId w) {
  WorkerView& v = views_[w];
  v.queue_length = states_[w].queue.size();
  int64_t rows = 0;
  for (uint32_t s : states_[w].queue) rows += table_[s].size;
  v.queued_rows = rows;
}

QueryId Engine::Submit(Query q, TimePoint now) {
  q.id = next_query_id_++;
  q.arrival = now;
  if (q.deadline < now) q.deadline = now;
  metrics_.OnArrival(now);
  ++in_system_;
  uint32_t slot = AllocSlot(q);
  if (q.task >= suite_->tasks().size()) {
    DropSlot(slot, DropReason::kUnservable, now);
    return q.id;
  }
  if (central_.size() >= options_.max_central_queue) {
    DropSlot(slot, DropReason::kQueueFull, now);
    return q.id;
  }
  policies_.batching->OnArrival(q, now);
  ++arrivals_since_plan_;
  if (policies_.placement) {
    WorkerId w = policies_.placement->Place(q, views_, now);
    if (w < states_.size() && views_[w].active) {
      EnqueueOnWorker(slot, w, now);
      TryStart(w, now);
      return q.id;
    }
  }
  if (central_.empty()) central_arrival_ordered_ = true;
  if (!InsertByDeadline(&central_, slot, table_)) central_arrival_ordered_ = false;
  if (policies_.dispatch->shared_queue()) {
    StartIdleOnSharedQueue(now);
  } else {
    RunDispatch(now);
  }
  return q.id;
}

void Engine::RunDispatch(TimePoint now) {
  if (central_.empty()) return;
  assignments_.clear();
  policies_.dispatch->Assign(QueueView(&central_, &table_), views_, now, &assignments_);
  if (assignments_.empty()) return;
  std::sort(assignments_.begin(), assignments_.end(),
            [](const Assignment& a, const Assignment& b) { return a.position < b.position; });
  positions_.clear();
  for (const Assignment& a : assignments_) positions_.push_back(a.position);
  RemovePositions(&central_, positions_, &removed_);
  touched_.clear();
  for (size_t i = 0; i < assignments_.size(); ++i) {
    uint32_t slot = removed_[i];
    WorkerId w = assignments_[i].worker;
    if (w >= states_.size()) {
      DropSlot(slot, DropReason::kUnservable, now);
      continue;
    }
    if (EnqueueOnWorker(slot, w, now)) touched_.push_back(w);
  }
  for (WorkerId w : touched_) TryStart(w, now);
}

bool Engine::EnqueueOnWorker(uint32_t slot, WorkerId w, TimePoint now) {
  WorkerState& st = states_[w];
  if (st.queue.size() >= options_.max_worker_queue) {
    DropSlot(slot, DropReason::kQueueFull, now);
    return false;
  }
  if (st.queue.empty()) st.arrival_ordered = true;
  // Ids grow with arrival, so back-insertions keep arrival order too.
  bool at_back = InsertByDeadline(&st.queue, slot, table_);
  bool id_order = st.queue.size() < 2 || table_[st.queue[st.queue.size() - 2]].id < table_[slot].id;
  if (!at_back || !id_order) st.arrival_ordered = false;
  views_[w].queue_length = st.queue.size();
  views_[w].queued_rows += table_[slot].size;
  return true;
}

void Engine::AccrueCost(TimePoint now) {
  if (now <= cost_clock_) return;
  double dt = ToSeconds(now - cost_clock_);
  cost_usd_ += active_price_per_hour_ * dt / 3600.0;
  core_seconds_ += active_cores_ * dt;
  cost_clock_ = now;
}

void Engine::OnPlanTick(TimePoint now) {
  if (!policies_.planning) return;
  PlanningInput in;
  in.now = now;
  double window = ToSeconds(now - last_plan_);
  in.observed_qps = window > 0 ? static_cast<double>(arrivals_since_plan_) / window : 0;
  in.workers = &views_;
  arrivals_since_plan_ = 0;
  last_plan_ = now;
  plan_.change = false;
  plan_.active.clear();
  policies_.planning->Plan(in, &plan_);
  if (!plan_.change || plan_.active.size() != views_.size()) return;
  AccrueCost(now);
  bool any = false;
  for (bool a : plan_.active) any = any || a;
  if (!any) plan_.active[0] = true;  // a deployment keeps at least one worker
  active_price_per_hour_ = 0;
  active_cores_ = 0;
  for (size_t w = 0; w < views_.size(); ++w) {
    views_[w].active = plan_.active[w];
    if (!views_[w].active) continue;
    const HardwareSpec& hw = suite_->hardware()[views_[w].hardware];
    active_price_per_hour_ += hw.price_per_hour;
    active_cores_ += hw.cores;
  }
  // Queries waiting centrally may now have a worker.
  if (policies_.dispatch->shared_queue()) {
    StartIdleOnSharedQueue(now);
  } else {
    RunDispatch(now);
  }
}

Duration Engine::EnsureLoaded(WorkerId w, VariantId v) {
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  st.lru[v] = ++use_clock_;
  if (view.loaded[v]) return Duration(0);
  metrics_.OnColdStart();
  view.loaded[v] = true;
  // Evict least recently used variants while over the hardware's memory (0 = unlimited).
  double capacity_mb = suite_->hardware()[view.hardware].memory_gb * 1024.0;
  if (capacity_mb > 0) {
    auto used = [&] {
      double mb = 0;
      for (VariantId x = 0; x < view.loaded.size(); ++x) {
        if (view.loaded[x]) mb += suite_->variants()[x].memory_mb;
      }
      return mb;
    };
    while (used() > capacity_mb) {
      VariantId victim = kNoId;
      for (VariantId x = 0; x < view.loaded.size(); ++x) {
        if (x == v || !view.loaded[x]) continue;
        if (victim == kNoId || st.lru[x] < st.lru[victim]) victim = x;
      }
      if (victim == kNoId) break;
      view.loaded[victim] = false;
    }
  }
  return suite_->variants()[v].load_time;
}

void Engine::StartIdleOnSharedQueue(TimePoint now) {
  const size_t n = views_.size();
  for (size_t k = 0; k < n && !central_.empty() && busy_workers_ < n; ++k) {
    WorkerId w = static_cast<WorkerId>((next_idle_ + k) % n);
    if (views_[w].busy || !views_[w].active) continue;
    TryStart(w, now);
    if (views_[w].busy) next_idle_ = (w + 1) % n;  // the next arrival tries the next worker
  }
}

void Engine::TryStart(WorkerId w, TimePoint now) {
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  const bool shared = policies_.dispatch->shared_queue();
  if (shared && !view.active) return;  // retired: takes nothing more from the central queue
  std::deque<uint32_t>& queue = shared ? central_ : st.queue;
  // Bounded: every round starts a batch, waits, idles, or drops at least one query.
  while (!view.busy && !queue.empty()) {
    BatchDecision& d = decision_;
    d.Clear();
    const bool ordered = shared ? central_arrival_ordered_ : st.arrival_ordered;
    policies_.batching->NextBatch(view, QueueView(&queue, &table_, ordered), now, &d);
    const bool run = d.kind == BatchDecision::Kind::kRun && !d.take.empty();
    if (!run) d.take.clear();
    std::sort(d.take.begin(), d.take.end());
    // Resolve positions to slots before the queue changes; a position in both lists runs.
    std::vector<uint32_t>& take_slots = removed_;
    take_slots.clear();
    for (uint32_t p : d.take) take_slots.push_back(queue[p]);
    // Dropped (policy) and rejected (unservable) positions; a position also taken runs.
    drop_slots_.clear();
    reject_slots_.clear();
    positions_ = d.take;
    // Rejects first, so a position in both lists is reported unservable.
    for (auto [list, slots] :
         {std::pair{&d.reject, &reject_slots_}, std::pair{&d.drop, &drop_slots_}}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
      for (uint32_t p : *list) {
        if (std::binary_search(d.take.begin(), d.take.end(), p)) continue;
        if (slots == &drop_slots_ && std::binary_search(d.reject.begin(), d.reject.end(), p))
          continue;
        slots->push_back(queue[p]);
        positions_.push_back(p);
      }
    }
    std::sort(positions_.begin(), positions_.end());
    positions_.erase(std::unique(positions_.begin(), positions_.end()), positions_.end());
    RemovePositions(&queue, positions_, &scratch_slots_);
    if (!shared) {
      view.queue_length = st.queue.size();
      for (uint32_t s : scratch_slots_) view.queued_rows -= table_[s].size;
    }
    const bool dropped_any = !drop_slots_.empty() || !reject_slots_.empty();
    for (uint32_t s : drop_slots_) DropSlot(s, DropReason::kPolicy, now);
    for (uint32_t s : reject_slots_) DropSlot(s, DropReason::kUnservable, now);

    if (d.kind == BatchDecision::Kind::kWaitUntil) {
      st.wake = std::max(d.wait_until, now + Duration(1));
      wakes_.push({st.wake, w});
      return;
    }
    if (!run) {
      if (dropped_any) continue;  // the policy cleared some queries: ask again
      return;
    }
    VariantId v = d.variant;
    if (v >= suite_->variants().size()) {  // a policy bug must not lose queries
      for (uint32_t s : take_slots) DropSlot(s, DropReason::kUnservable, now);
      continue;
    }
    st.running_slots = take_slots;
    batch_queries_.clear();
    int32_t rows = 0;
    for (uint32_t s : st.running_slots) {
      batch_queries_.push_back(table_[s]);
      rows += table_[s].size;
    }
    BatchLaunch launch;
    launch.batch = next_batch_id_++;
    launch.worker = w;
    launch.hardware = view.hardware;
    launch.variant = v;
    launch.rows = rows;
    launch.start = now;
    launch.cold_start = EnsureLoaded(w, v);
    launch.queries = &batch_queries_;
    st.running_solo.clear();  // keeps its capacity: no allocation once warm
    launch.solo = &st.running_solo;
    st.running = launch.batch;
    st.running_start = now;
    st.running_variant = v;
    st.wake = kTimeInfinite;
    view.busy = true;
    ++busy_workers_;
    view.last_variant = v;
    Duration expected = executor_->Launch(launch);
    view.busy_until = now + expected;
    return;
  }
}

void Engine::OnBatchComplete(WorkerId w, BatchId batch, TimePoint now) {
  if (w >= states_.size()) return;
  WorkerState& st = states_[w];
  WorkerView& view = views_[w];
  if (!view.busy || st.running != batch) return;  // stale or duplicate completion
  const int n = static_cast<int>(st.running_slots.size());
  metrics_.OnBatch(n, now - st.running_start);
  std::vector<uint32_t> slots;
  slots.swap(st.running_slots);
  // The policy's view of the batch, taken before Finish frees the slots.
  const bool have_solo = st.running_solo.size() == slots.size();
  completed_.clear();
  for (size_t i = 0; i < slots.size(); ++i) {
    const Query& q = table_[slots[i]];
    completed_.push_back({q.id, q.app, have_solo ? st.running_solo[i] : Duration(-1)});
  }
  for (uint32_t s : slots) {
    const Query& q = table_[s];
    QueryRecord r = RecordOf(q);
    r.variant = st.running_variant;
    r.worker = w;
    r.batch_size = n;
    r.start = st.running_start;
    r.finish = now;
    r.met_slo = now <= q.deadline;
    Finish(s, r);
  }
  slots.clear();
  st.running_slots.swap(slots);
  view.busy = false;
  --busy_workers_;
  st.running = 0;
  BatchCompletion done;
  done.now = now;
  done.worker = w;
  done.hardware = view.hardware;
  done.variant = st.running_variant;
  done.duration = now - st.running_start;
  done.requests = completed_;
  policies_.batching->OnBatchComplete(done);
  RunDispatch(now);
  TryStart(w, now);
}

void Engine::OnTimer(TimePoint now) {
  while (!wakes_.empty() && wakes_.top().at <= now) {
    Wake wk = wakes_.top();
    wakes_.pop();
    WorkerState& st = states_[wk.worker];
    if (st.wake != wk.at) continue;  // superseded
    st.wake = kTimeInfinite;
    TryStart(wk.worker, now);
  }
}

TimePoint Engine::NextWakeup() const {
  // Stale entries may surface early; OnTimer skips them, so this is a safe lower bound.
  return wakes_.empty() ? kTimeInfinite : wakes_.top().at;
}

void Engine::DropAllQueued(TimePoint now) {
  std::deque<uint32_t> central;
  central.swap(central_);
  for (uint32_t s : central) DropSlot(s, DropReason::kShutdown, now);
  for (WorkerId w = 0; w < states_.size(); ++w) {
    std::deque<uint32_t> q;
    q.swap(states_[w].queue);
    for (uint32_t s : q) DropSlot(s, DropReason::kShutdown, now);
    SyncQueueView(w);
  }
}

void Engine::DropSlot(uint32_t slot, DropReason reason, TimePoint now) {
  QueryRecord r = RecordOf(table_[slot]);
  r.start = now;
  r.finish = now;
  r.dropped = true;
  r.drop_reason = reason;
  Finish(slot, r);
}

QueryRecord Engine::RecordOf(const Query& q) {
  QueryRecord r;
  r.id = q.id;
  r.task = q.task;
  r.app = q.app;
  r.size = q.size;
  r.cookie = q.cookie;
  r.arrival = q.arrival;
  r.deadline = q.deadline;
  return r;
}

void Engine::Finish(uint32_t slot, QueryRecord& r) {
  double acc = r.variant < variant_accuracy_.size() ? variant_accuracy_[r.variant] : 0.0;
  metrics_.OnDone(r, acc);
  --in_system_;
  FreeSlot(slot);
  if (sink_) sink_(r);
}

MetricsSummary Engine::Summarize(TimePoint end) const {
  MetricsSummary m = metrics_.Summarize(end, static_cast<int>(views_.size()));
  double dt = end > cost_clock_ ? ToSeconds(end - cost_clock_) : 0;
  m.cost_usd = cost_usd_ + active_price_per_hour_ * dt / 3600.0;
  m.core_seconds = core_seconds_ + active_cores_ * dt;
  m.cost_per_hour = m.elapsed_s > 0 ? m.cost_usd * 3600.0 / m.elapsed_s : active_price_per_hour_;
  return m;
}

}  // namespace sloserve
