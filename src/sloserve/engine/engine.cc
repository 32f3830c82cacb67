#include "sloserve/engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace sloserve {
namespace {

double VariantMb(const ProfileSuite& suite, VariantId v) {
  return suite.variants()[v].memory_mb;
}

}  // namespace

PolicyNames PolicyNamesOf(const PolicySpec& spec) {
  PolicyNames n;
  n.dispatch = spec.dispatch;
  n.batching =
      spec.batching + (spec.selection.empty() ? "" : " (selection " + spec.selection + ")");
  n.placement = spec.placement;
  n.planning = spec.planning;
  return n;
}

StatusOr<std::unique_ptr<Engine>> Engine::Create(const ProfileSuite* suite,
                                                 std::vector<WorkerSpec> workers,
                                                 EnginePolicies policies, WorkerExecutor* executor,
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
  if (options.max_attempts < 1 || options.max_attempts > 100) {
    return InvalidArgumentError("engine: max_attempts must be in [1, 100]");
  }
  if (options.admission.max_queued_rows < 0) {
    return InvalidArgumentError("engine: admission max_queued_rows must be >= 0");
  }
  RETURN_IF_ERROR(ValidatePriorityLevels(options.admission.priority_levels,
                                         options.admission.default_priority));
  const size_t num_tasks = suite->tasks().size();
  for (size_t t = num_tasks; t < policies.model_batching.size(); ++t) {
    if (policies.model_batching[t]) {
      return InvalidArgumentError("engine: a batching policy for model " + std::to_string(t) +
                                  ", which is not a task of suite " + suite->name());
    }
  }
  for (size_t t = 0; t < options.model_slo.size(); ++t) {
    if (options.model_slo[t] < Duration(0) ||
        (t >= num_tasks && options.model_slo[t] > Duration(0)))
      return InvalidArgumentError("engine: model_slo[" + std::to_string(t) +
                                  "] is negative or names no task of the suite");
  }
  std::unique_ptr<Engine> e(new Engine(suite, std::move(policies), executor, options));
  e->central_ = ModelQueues(/*by_model=*/e->policies_.dispatch->shared_queue());
  e->checks_ = BatchChecks(*suite);
  if (num_tasks > 1) {
    e->model_metrics_.resize(num_tasks);
    e->model_price_per_hour_.assign(num_tasks, 0.0);
    e->model_cores_.assign(num_tasks, 0);
    e->model_arrivals_.assign(num_tasks, 0);
    e->model_qps_.assign(num_tasks, 0.0);
    e->model_rate_history_.assign(num_tasks, {});
    e->model_system_rows_.assign(num_tasks, 0);
    e->model_running_rows_.assign(num_tasks, 0);
    e->model_shares_workers_.assign(num_tasks, 0);
  }
  e->eligibility_.Init(suite);
  e->admission_ = AdmissionControl(*suite, options.task, options.slo, options.admission,
                                   e->policies_.variant_follows_load);
  const size_t num_variants = suite->variants().size();
  std::vector<std::string> machine_names;
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerSpec& spec = workers[i];
    if (spec.hardware >= suite->hardware().size()) {
      return InvalidArgumentError("engine: worker '" + spec.name + "' has unknown hardware");
    }
    const HardwareSpec& hw = suite->hardware()[spec.hardware];
    WorkerView v;
    v.id = static_cast<WorkerId>(i);
    v.hardware = spec.hardware;
    v.name = spec.name.empty() ? "w" + std::to_string(i) : spec.name;
    v.cores = hw.cores;
    const std::string machine = spec.machine.empty() ? "m-" + v.name : spec.machine;
    auto found = std::find(machine_names.begin(), machine_names.end(), machine);
    if (found == machine_names.end()) {
      v.machine = e->NewMachine(machine, spec.hardware);
      machine_names.push_back(machine);
    } else {
      v.machine = static_cast<MachineId>(found - machine_names.begin());
      if (e->machines_[v.machine].hardware != spec.hardware) {
        return InvalidArgumentError("engine: worker '" + v.name + "' on machine '" + machine +
                                    "' has another hardware type than the machine's workers");
      }
    }
    v.residency.assign(num_variants, Residency::kAbsent);
    if (!spec.preload_none) {
      if (spec.preload.empty()) {
        for (VariantId var = 0; var < num_variants; ++var) {
          if (!suite->BatchSizes(spec.hardware, var).empty()) v.residency[var] = Residency::kReady;
        }
      } else {
        for (VariantId var : spec.preload) {
          if (var >= num_variants)
            return InvalidArgumentError("engine: preload of unknown variant");
          v.residency[var] = Residency::kReady;
        }
      }
    }
    for (VariantId var = 0; var < num_variants; ++var) {
      if (v.residency[var] == Residency::kReady)
        e->machines_[v.machine].used_mb += VariantMb(*suite, var);
    }
    e->views_.push_back(std::move(v));
    WorkerState st;
    st.lru.assign(num_variants, 0);
    st.loaded_before.assign(num_variants, false);
    e->states_.push_back(std::move(st));
  }
  e->RecomputeActiveCost();
  for (const VariantSpec& v : suite->variants()) e->variant_accuracy_.push_back(v.accuracy);

  PolicyContext ctx;
  ctx.suite = suite;
  ctx.workers = e->views_;
  ctx.machines = e->machines_;
  ctx.seed = seed;
  ctx.task = options.task;
  ctx.slo = options.slo;
  ctx.submit_offline = options.submit_offline;
  ctx.progress = options.progress;
  ctx.live = options.live;
  ctx.offline_cancel = options.offline_cancel;
  ctx.degraded = options.degraded;
  ctx.future_peak_qps = options.future_peak_qps;
  RETURN_IF_ERROR(e->policies_.dispatch->Init(ctx).WithPrefix("dispatch policy"));
  RETURN_IF_ERROR(e->policies_.batching->Init(ctx).WithPrefix("batching policy"));
  for (TaskId t = 0; t < e->policies_.model_batching.size(); ++t) {
    if (!e->policies_.model_batching[t]) continue;
    PolicyContext model_ctx = ctx;
    model_ctx.task = t;
    model_ctx.slo = e->ModelSlo(t);
    RETURN_IF_ERROR(e->policies_.model_batching[t]->Init(model_ctx).WithPrefix(
        "batching policy of model '" + suite->tasks()[t].name + "'"));
  }
  e->RecountServing();
  e->NotifyWorkersChanged();
  if (e->policies_.placement) {
    RETURN_IF_ERROR(e->policies_.placement->Init(ctx).WithPrefix("placement policy"));
  }
  if (e->policies_.planning) {
    RETURN_IF_ERROR(e->policies_.planning->Init(ctx).WithPrefix("planning policy"));
    e->record_sizes_ = e->policies_.planning->reads_recent_sizes();
  }
  return e;
}

Engine::Engine(const ProfileSuite* suite, EnginePolicies policies, WorkerExecutor* executor,
               EngineOptions options)
    : suite_(suite),
      policies_(std::move(policies)),
      executor_(executor),
      options_(std::move(options)),
      metrics_(options_.series_interval, options_.latency_phases) {}

uint32_t Engine::AllocSlot(const Query& q) {
  if (!free_slots_.empty()) {
    uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    table_[s] = q;
    attempts_[s] = 0;
    return s;
  }
  table_.push_back(q);
  attempts_.push_back(0);
  return static_cast<uint32_t>(table_.size() - 1);
}

Duration Engine::ModelSlo(TaskId task) const {
  if (task < options_.model_slo.size() && options_.model_slo[task] > Duration(0))
    return options_.model_slo[task];
  if (task == options_.task) return options_.slo;
  return task < suite_->tasks().size() ? suite_->tasks()[task].default_slo : options_.slo;
}

std::string Engine::BatchingName(TaskId task) const {
  if (task >= policies_.model_batching.size() || !policies_.model_batching[task])
    return options_.names.batching;
  if (task < options_.names.model_batching.size() && !options_.names.model_batching[task].empty())
    return options_.names.model_batching[task];
  return "batching of model '" + suite_->tasks()[task].name + "'";
}

AdmissionControl& Engine::AdmissionFor(TaskId task) {
  if (task == options_.task || task >= suite_->tasks().size()) return admission_;
  if (model_admission_.size() <= task) model_admission_.resize(task + 1);
  std::unique_ptr<AdmissionControl>& a = model_admission_[task];
  if (!a) {
    a = std::make_unique<AdmissionControl>(*suite_, task, ModelSlo(task), options_.admission,
                                           policies_.variant_follows_load);
    a->SetActiveWorkers(ServingWorkers(task));
  }
  return *a;
}

std::vector<std::pair<WorkerId, HardwareId>> Engine::ServingWorkers(TaskId task) const {
  std::vector<std::pair<WorkerId, HardwareId>> serving;
  for (const WorkerView& v : views_) {
    if (eligibility_.Eligible(v, task)) serving.emplace_back(v.id, v.hardware);
  }
  return serving;
}

bool Engine::WouldShed(TaskId task, Duration slo, int32_t level, TimePoint now) {
  return admission_.enabled() &&
         !AdmissionFor(task).Admit(QueuedRowsOf(task), 1, now, now + slo, level);
}

int64_t Engine::MaxRowsAlone(TaskId task, Duration slo) {
  return AdmissionFor(task).MaxRowsAlone(slo);
}

int64_t Engine::QueuedRowsOf(TaskId task) const {
  if (task >= model_system_rows_.size() || model_shares_workers_[task])
    return system_rows_ - running_rows_;
  return model_system_rows_[task] - model_running_rows_[task];
}

void Engine::AddRunningRows(TaskId task, int64_t rows) {
  running_rows_ += rows;
  if (task < model_running_rows_.size()) model_running_rows_[task] += rows;
}

void Engine::SetWorkerReachable(WorkerId w, bool reachable, TimePoint now) {
  if (w >= views_.size() || states_[w].unreachable == !reachable) return;
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  st.unreachable = !reachable;
  if (reachable) {
    --unreachable_workers_;
    view.active = view.phase == WorkerPhase::kActive && !st.removing;
  } else {
    ++unreachable_workers_;
    view.active = false;
    scratch_slots_.clear();
    st.queue.TakeAll(&scratch_slots_);
    for (uint32_t s : scratch_slots_) RequeueCentral(s);
    SyncQueueView(w);
  }
  NotifyWorkersChanged();
  Redispatch(now);
}

bool Engine::RequestLoad(WorkerId w, VariantId v, TimePoint now) {
  if (w >= views_.size() || v >= suite_->variants().size()) return false;
  const Residency r = views_[w].residency[v];
  if (r == Residency::kReady || r == Residency::kLoading) return false;
  SendLoad(w, v, now);
  return true;
}

bool Engine::RequestUnload(WorkerId w, VariantId v, TimePoint now) {
  if (w >= views_.size() || v >= suite_->variants().size()) return false;
  const WorkerView& view = views_[w];
  if (view.residency[v] != Residency::kReady || view.pinned == v) return false;
  if (view.busy && states_[w].batch_variant == v) return false;
  SendUnload(w, v, now);
  return true;
}

void Engine::SyncQueueView(WorkerId w) {
  WorkerView& v = views_[w];
  v.queue_length = states_[w].queue.size();
  int64_t rows = 0;
  states_[w].queue.ForEach([&](const ModelQueues::Queue& q) {
    for (uint32_t s : q.slots) rows += table_[s].size;
  });
  v.queued_rows = rows;
}

void Engine::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "sloserve: %s\n", line.c_str());
  }
}

void Engine::Warn(const std::string& line) {
  // The first few in full, then one in a thousand: a misbehaving policy must not flood.
  ++warnings_;
  if (warnings_ > 20 && warnings_ % 1000 != 0) return;
  std::string text = line;
  if (warnings_ > 20) text += " (" + std::to_string(warnings_) + " warnings so far)";
  Log(text);
}

void Engine::Invalid(const std::string& policy, const std::string& what) {
  ++counters_.invalid_decisions;
  Warn("engine: rejected a decision of policy '" + policy + "': " + what);
}

QueryId Engine::Submit(Query q, TimePoint now) {
  q.id = next_query_id_++;
  q.arrival = now;
  q.priority = admission_.Level(q.priority);
  if (q.deadline < now) q.deadline = now;
  metrics_.OnArrival(now);
  if (record_sizes_ && q.task == options_.task) RecordSize(q.size);
  ++in_system_;
  system_rows_ += q.size;
  if (q.task < model_system_rows_.size()) model_system_rows_[q.task] += q.size;
  uint32_t slot = AllocSlot(q);
  if (q.task >= suite_->tasks().size()) {
    DropSlot(slot, DropReason::kUnservable, now);
    return q.id;
  }
  if (!model_metrics_.empty()) model_metrics_[q.task].OnArrival();
  if (serving_[q.task] == 0) {  // no worker's hardware serves its model (until a plan adds one)
    DropSlot(slot, DropReason::kUnservable, now);
    return q.id;
  }
  if (admission_.enabled() && !AdmissionFor(q.task).Admit(QueuedRowsOf(q.task) - q.size, q.size,
                                                          now, q.deadline, q.priority)) {
    DropSlot(slot, DropReason::kShed, now);
    return q.id;
  }
  if (central_.size() >= options_.max_central_queue) {
    DropSlot(slot, DropReason::kQueueFull, now);
    return q.id;
  }
  BatchingFor(q.task).OnArrival(q, now);
  ++arrivals_since_plan_;
  if (!model_arrivals_.empty()) ++model_arrivals_[q.task];
  if (policies_.placement) {
    const PlacementDecision d = policies_.placement->Place(q, views_, machines_, now);
    if (d.prefetch_worker != kNoId) {
      if (d.prefetch_worker >= views_.size() || d.prefetch_variant >= suite_->variants().size()) {
        Invalid(options_.names.placement, "prefetch of an unknown worker or variant");
      } else if (checks_.max_rows(views_[d.prefetch_worker].hardware, d.prefetch_variant) <= 0) {
        Invalid(options_.names.placement,
                "prefetch of variant '" + suite_->variants()[d.prefetch_variant].name +
                    "', not profiled on the hardware of " + views_[d.prefetch_worker].name);
      } else if (!views_[d.prefetch_worker].busy &&
                 views_[d.prefetch_worker].phase == WorkerPhase::kActive &&
                 views_[d.prefetch_worker].residency[d.prefetch_variant] == Residency::kAbsent) {
        ++counters_.prefetches;
        SendLoad(d.prefetch_worker, d.prefetch_variant, now);
      }
    }
    if (d.worker != kNoId && d.worker < views_.size()) {
      const WorkerView& v = views_[d.worker];
      for (VariantId x : d.unload) {
        const bool running = v.busy && states_[d.worker].batch_variant == x;
        if (x < v.residency.size() && v.residency[x] == Residency::kReady && x != v.pinned &&
            !running)
          SendUnload(d.worker, x, now);
      }
    }
    if (d.worker != kNoId) {
      if (d.worker >= views_.size() || !views_[d.worker].active) {
        Invalid(options_.names.placement,
                "query " + std::to_string(q.id) + " placed on " +
                    (d.worker >= views_.size() ? "unknown worker " + std::to_string(d.worker)
                                               : "inactive worker " + views_[d.worker].name));
        DropSlot(slot, DropReason::kInternal, now);
        return q.id;
      }
      EnqueueOnWorker(slot, d.worker, options_.names.placement, now);
      TryStart(d.worker, now);
      return q.id;
    }
  }
  RequeueCentral(slot);
  Redispatch(now);
  return q.id;
}

bool Engine::NoWorkerReachable() const {
  if (unreachable_workers_ == 0) return false;
  for (WorkerId w = 0; w < states_.size(); ++w) {
    if (!states_[w].unreachable && views_[w].phase != WorkerPhase::kRetired) return false;
  }
  return true;
}

void Engine::Redispatch(TimePoint now) {
  if (unreachable_workers_ > 0 && !central_.empty() && NoWorkerReachable()) {
    std::vector<uint32_t> central;
    central_.TakeAll(&central);
    for (uint32_t s : central) DropSlot(s, DropReason::kExecutorError, now);
    return;
  }
  if (policies_.dispatch->shared_queue()) {
    StartIdleOnSharedQueue(now);
  } else {
    RunDispatch(now);
  }
}

void Engine::RunDispatch(TimePoint now) {
  // A worker whose batching policy dropped what it was just given (ORLOJ's timeouts) is
  // idle again with an empty queue, and a dispatcher that waits for idle instances (kairos)
  // would wait for an event that never comes: ask again. Bounded: every round dispatches.
  while (DispatchOnce(now)) {
  }
}

bool Engine::Drained(WorkerId w) const {
  return !views_[w].busy && states_[w].queue.empty() && !central_.empty();
}

bool Engine::DispatchOnce(TimePoint now) {
  // Under the shared-queue topology workers batch from the central queue themselves.
  if (central_.empty() || central_.by_model()) return false;
  ModelQueues::Queue& pending = central_.All();
  assignments_.clear();
  policies_.dispatch->Assign(QueueView(&pending.slots, &table_), views_, now, &assignments_);
  if (assignments_.empty()) return false;
  if (assignments_.size() == 1 && assignments_[0].position == 0) {
    // The usual case (one arrival, dispatched at once): the queue's head to one worker,
    // without the general path's sort, checks and position lists.
    const WorkerId w = assignments_[0].worker;
    if (w < states_.size() && views_[w].active) {
      const uint32_t slot = central_.PopFront(pending);
      if (!EnqueueOnWorker(slot, w, options_.names.dispatch, now)) return false;
      TryStart(w, now);
      return Drained(w);
    }
  }
  std::sort(assignments_.begin(), assignments_.end(),
            [](const Assignment& a, const Assignment& b) { return a.position < b.position; });
  // Positions must be in range and unique; a bad one is skipped (the query stays queued).
  size_t kept = 0;
  for (size_t i = 0; i < assignments_.size(); ++i) {
    const Assignment& a = assignments_[i];
    if (a.position >= pending.slots.size()) {
      Invalid(options_.names.dispatch, "position " + std::to_string(a.position) +
                                           " beyond the queue of " +
                                           std::to_string(pending.slots.size()));
      continue;
    }
    if (kept > 0 && assignments_[kept - 1].position == a.position) {
      Invalid(options_.names.dispatch,
              "position " + std::to_string(a.position) + " assigned twice");
      continue;
    }
    assignments_[kept++] = a;
  }
  assignments_.resize(kept);
  if (assignments_.empty()) return false;
  positions_.clear();
  for (const Assignment& a : assignments_) positions_.push_back(a.position);
  central_.Remove(pending, positions_, &removed_);
  touched_.clear();
  for (size_t i = 0; i < assignments_.size(); ++i) {
    uint32_t slot = removed_[i];
    WorkerId w = assignments_[i].worker;
    if (w >= states_.size() || !views_[w].active) {
      Invalid(options_.names.dispatch,
              "query " + std::to_string(table_[slot].id) + " assigned to " +
                  (w >= states_.size() ? "unknown worker " + std::to_string(w)
                                       : "inactive worker " + views_[w].name));
      DropSlot(slot, DropReason::kInternal, now);
      continue;
    }
    if (EnqueueOnWorker(slot, w, options_.names.dispatch, now)) touched_.push_back(w);
  }
  for (WorkerId w : touched_) TryStart(w, now);
  for (WorkerId w : touched_) {
    if (Drained(w)) return true;
  }
  return false;
}

bool Engine::EnqueueOnWorker(uint32_t slot, WorkerId w, const std::string& by, TimePoint now) {
  WorkerState& st = states_[w];
  if (st.queue.size() >= options_.max_worker_queue) {
    DropSlot(slot, DropReason::kQueueFull, now);
    return false;
  }
  // A worker dedicated to a model (or pinned to one of its variants) serves it only.
  const TaskId model = views_[w].model;
  if (model != kNoId && model != table_[slot].task) {
    Invalid(by, "query " + std::to_string(table_[slot].id) + " sent to " + views_[w].name +
                    ", dedicated to model '" + suite_->tasks()[model].name + "'");
    DropSlot(slot, DropReason::kInternal, now);
    return false;
  }
  st.queue.Insert(slot, table_, /*check_ids=*/true);
  views_[w].queue_length = st.queue.size();
  views_[w].queued_rows += table_[slot].size;
  return true;
}

void Engine::AccrueCost(TimePoint now) {
  if (now <= cost_clock_) return;
  double dt = ToSeconds(now - cost_clock_);
  cost_usd_ += active_price_per_hour_ * dt / 3600.0;
  core_seconds_ += active_cores_ * dt;
  metrics_.OnCoreTime(cost_clock_, now, active_cores_);
  for (size_t t = 0; t < model_price_per_hour_.size(); ++t)
    model_metrics_[t].OnCost(model_price_per_hour_[t] * dt / 3600.0, model_cores_[t] * dt);
  cost_clock_ = now;
}

void Engine::RecomputeActiveCost() {
  // Workers that receive queries or are starting up cost money; drained ones are off.
  active_price_per_hour_ = 0;
  active_cores_ = 0;
  std::fill(model_price_per_hour_.begin(), model_price_per_hour_.end(), 0.0);
  std::fill(model_cores_.begin(), model_cores_.end(), 0);
  std::vector<std::pair<WorkerId, HardwareId>> serving;  // admission: workers taking queries
  for (const WorkerView& v : views_) {
    if (v.active) serving.emplace_back(v.id, v.hardware);
    if (!v.active && v.phase != WorkerPhase::kStarting) continue;
    active_price_per_hour_ += suite_->hardware()[v.hardware].price_per_hour;
    active_cores_ += v.cores;
    if (v.model < model_price_per_hour_.size()) {
      model_price_per_hour_[v.model] += suite_->hardware()[v.hardware].price_per_hour;
      model_cores_[v.model] += v.cores;
    }
  }
  if (!model_shares_workers_.empty()) {
    // An undedicated worker serves every model its hardware has a variant of.
    std::fill(model_shares_workers_.begin(), model_shares_workers_.end(), 0);
    std::vector<uint8_t> seen_type(suite_->hardware().size(), 0);
    for (const WorkerView& v : views_) {
      if (!v.active || v.model != kNoId || seen_type[v.hardware]) continue;
      seen_type[v.hardware] = 1;
      std::vector<TaskId> served;
      for (TaskId t = 0; t < model_shares_workers_.size(); ++t)
        if (eligibility_.HardwareServes(v.hardware, t)) served.push_back(t);
      if (served.size() > 1)
        for (TaskId t : served) model_shares_workers_[t] = 1;
    }
  }
  admission_.SetActiveWorkers(eligibility_.uniform() ? serving : ServingWorkers(options_.task));
  for (TaskId t = 0; t < model_admission_.size(); ++t) {
    if (model_admission_[t]) model_admission_[t]->SetActiveWorkers(ServingWorkers(t));
  }
}

void Engine::RecordSize(int32_t size) {
  if (recent_sizes_.size() < PlanningInput::kRecentSizes) {
    recent_sizes_.push_back(size);
    return;
  }
  recent_sizes_[recent_sizes_next_] = size;
  recent_sizes_next_ = (recent_sizes_next_ + 1) % recent_sizes_.size();
}

void Engine::OnPlanTick(TimePoint now) {
  if (!policies_.planning) return;
  PlanningInput in;
  in.now = now;
  double window = ToSeconds(now - last_plan_);
  in.observed_qps = window > 0 ? static_cast<double>(arrivals_since_plan_) / window : 0;
  if (rate_history_.size() >= 3600) rate_history_.erase(rate_history_.begin());
  rate_history_.push_back(in.observed_qps);
  in.rate_history = rate_history_;
  for (TaskId t = 0; t < model_arrivals_.size(); ++t) {
    model_qps_[t] = window > 0 ? static_cast<double>(model_arrivals_[t]) / window : 0;
    model_arrivals_[t] = 0;
    std::vector<double>& history = model_rate_history_[t];
    if (history.size() >= 3600) history.erase(history.begin());
    history.push_back(model_qps_[t]);
  }
  in.model_qps = model_qps_;
  in.model_rate_history = model_rate_history_;
  plan_sizes_.assign(recent_sizes_.begin() + static_cast<ptrdiff_t>(recent_sizes_next_),
                     recent_sizes_.end());
  plan_sizes_.insert(plan_sizes_.end(), recent_sizes_.begin(),
                     recent_sizes_.begin() + static_cast<ptrdiff_t>(recent_sizes_next_));
  in.recent_sizes = plan_sizes_;
  in.workers = &views_;
  in.machines = &machines_;
  arrivals_since_plan_ = 0;
  last_plan_ = now;
  plan_.Clear();
  policies_.planning->Plan(in, &plan_);
  if (!plan_.change) return;
  ApplyPlan(now);
}

std::vector<int> Engine::ServingByType() const {
  std::vector<int> n(suite_->hardware().size(), 0);
  for (const WorkerView& v : views_) {
    if (v.phase == WorkerPhase::kActive || v.phase == WorkerPhase::kStarting) ++n[v.hardware];
  }
  return n;
}

void Engine::LogPlanChange(const std::vector<int>& before, const std::vector<int>& added) {
  const std::vector<int> after = ServingByType();
  if (after == before) return;
  std::string line = "plan of '" + options_.names.planning + "': workers serving";
  const char* sep = " ";
  for (HardwareId h = 0; h < after.size(); ++h) {
    if (after[h] == before[h] && added[h] == 0) continue;
    line += sep + suite_->hardware()[h].name + " " + std::to_string(before[h]) + " -> " +
            std::to_string(after[h]);
    if (added[h] > 0) line += " (" + std::to_string(added[h]) + " added)";
    sep = ", ";
  }
  Log(line);
}

void Engine::ApplyPlan(TimePoint now) {
  AccrueCost(now);
  // A live server says how its deployment changed (sim runs would print a line a tick).
  const std::vector<int> before = options_.live ? ServingByType() : std::vector<int>();
  std::vector<int> added(suite_->hardware().size(), 0);
  for (const WorkerPlan& p : plan_.workers) {
    if (p.worker == kNoId) {
      if (AddWorker(p, now) != kNoId && options_.live) ++added[p.hardware];
      continue;
    }
    if (p.worker >= views_.size() || views_[p.worker].phase == WorkerPhase::kRetired) {
      Invalid(
          options_.names.planning,
          "plan for " + (p.worker >= views_.size() ? "unknown worker " + std::to_string(p.worker)
                                                   : "retired worker " + views_[p.worker].name));
      continue;
    }
    if (p.pinned != kNoId && p.pinned >= suite_->variants().size()) {
      Invalid(options_.names.planning, "pinned variant " + std::to_string(p.pinned) + " unknown");
      continue;
    }
    if (p.pinned != kNoId && checks_.max_rows(views_[p.worker].hardware, p.pinned) <= 0) {
      Invalid(options_.names.planning, "pinned variant '" + suite_->variants()[p.pinned].name +
                                           "' is not profiled on the hardware of " +
                                           views_[p.worker].name);
      continue;
    }
    if (!ValidPlanModel(p, views_[p.worker].name)) continue;
    WorkerView& v = views_[p.worker];
    WorkerState& st = states_[p.worker];
    if (p.remove) st.removing = true;
    if (v.phase != WorkerPhase::kStarting) {
      const bool serve = p.active && !st.removing;
      v.phase = serve ? WorkerPhase::kActive : WorkerPhase::kDraining;
      v.active = serve && !st.unreachable;
    }
    if (p.cores > 0) v.cores = p.cores;
    v.pinned = p.pinned;
    v.model = PlannedModel(p, v.model);
    v.quota = p.quota;
    if (v.model != kNoId) UnqueueOtherModels(p.worker);
  }
  // A deployment keeps at least one worker receiving queries.
  bool any = false;
  for (const WorkerView& v : views_) any = any || v.active || v.phase == WorkerPhase::kStarting;
  if (!any) {
    for (WorkerId w = 0; w < views_.size(); ++w) {
      if (views_[w].phase == WorkerPhase::kRetired) continue;
      views_[w].phase = WorkerPhase::kActive;
      views_[w].active = true;
      states_[w].removing = false;
      break;
    }
  }
  for (WorkerId w = 0; w < views_.size(); ++w) MaybeRetire(w, now);
  RecomputeActiveCost();
  RecountServing();
  NotifyWorkersChanged();
  if (options_.live) LogPlanChange(before, added);
  // Queries waiting centrally may now have a worker.
  Redispatch(now);
}

bool Engine::ValidPlanModel(const WorkerPlan& p, const std::string& worker) {
  if (p.model == kNoId || p.model == kAnyModel) {
    if (p.model == kAnyModel && p.pinned != kNoId) {
      Invalid(options_.names.planning,
              "plan for " + worker + " pins a variant and undoes its model's dedication");
      return false;
    }
    return true;
  }
  if (p.model >= suite_->tasks().size()) {
    Invalid(options_.names.planning,
            "plan for " + worker + " dedicates it to unknown model " + std::to_string(p.model));
    return false;
  }
  if (p.pinned != kNoId && p.pinned < suite_->variants().size() &&
      checks_.task_of(p.pinned) != p.model) {
    Invalid(options_.names.planning, "plan for " + worker + " pins variant '" +
                                         suite_->variants()[p.pinned].name +
                                         "' of another model than the one it names ('" +
                                         suite_->tasks()[p.model].name + "')");
    return false;
  }
  return true;
}

TaskId Engine::PlannedModel(const WorkerPlan& p, TaskId current) const {
  if (p.pinned != kNoId) return checks_.task_of(p.pinned);  // a pin implies its model
  if (p.model == kAnyModel) return kNoId;
  return p.model != kNoId ? p.model : current;
}

void Engine::RecountServing() {
  // Per model, the workers not retired whose hardware has a profiled variant of it.
  serving_.assign(suite_->tasks().size(), 0);
  for (const WorkerView& v : views_) {
    if (v.phase == WorkerPhase::kRetired) continue;
    const uint8_t* servable = checks_.servable(v.hardware);
    if (!servable) continue;
    for (TaskId t = 0; t < serving_.size(); ++t) serving_[t] += servable[t];
  }
}

void Engine::NotifyWorkersChanged() {
  policies_.batching->OnWorkersChanged(views_);
  for (const std::unique_ptr<BatchingPolicy>& b : policies_.model_batching) {
    if (b) b->OnWorkersChanged(views_);
  }
}

void Engine::UnqueueOtherModels(WorkerId w) {
  WorkerState& st = states_[w];
  const TaskId model = views_[w].model;
  bool moved = false;
  scratch_slots_.clear();
  st.queue.ForEach([&](const ModelQueues::Queue& q) { moved = moved || q.task != model; });
  if (!moved) return;
  st.queue.TakeAll(&scratch_slots_);
  for (uint32_t s : scratch_slots_) {
    if (table_[s].task == model) {
      st.queue.Insert(s, table_, /*check_ids=*/true);
    } else {
      RequeueCentral(s);
    }
  }
  SyncQueueView(w);
}

MachineId Engine::NewMachine(std::string name, HardwareId hardware) {
  // A machine of the hardware's size: its memory bounds the variants resident on it.
  const HardwareSpec& hw = suite_->hardware()[hardware];
  MachineView m;
  m.id = static_cast<MachineId>(machines_.size());
  m.name = std::move(name);
  m.hardware = hardware;
  m.memory_mb = hw.memory_gb * 1024.0;
  m.cores = hw.cores;
  machines_.push_back(std::move(m));
  return machines_.back().id;
}

WorkerId Engine::AddWorker(const WorkerPlan& p, TimePoint now) {
  if (p.hardware >= suite_->hardware().size()) {
    Invalid(options_.names.planning,
            "new worker of unknown hardware " + std::to_string(p.hardware));
    return kNoId;
  }
  if (!ValidPlanModel(p, "a new worker")) return kNoId;
  const HardwareSpec& hw = suite_->hardware()[p.hardware];
  if (p.hardware < options_.max_workers_of_type.size() &&
      options_.max_workers_of_type[p.hardware] >= 0) {
    const int cap = options_.max_workers_of_type[p.hardware];
    const auto of_type = std::count_if(views_.begin(), views_.end(), [&](const WorkerView& w) {
      return w.hardware == p.hardware && w.phase != WorkerPhase::kRetired;
    });
    if (of_type >= cap) {
      Invalid(options_.names.planning, "new worker of hardware '" + hw.name +
                                           "' beyond its limit of " + std::to_string(cap) +
                                           " (the cores of the machine that runs them)");
      return kNoId;
    }
  }
  WorkerView v;
  v.id = static_cast<WorkerId>(views_.size());
  v.hardware = p.hardware;
  v.name = "w" + std::to_string(v.id);
  v.cores = p.cores > 0 ? p.cores : hw.cores;
  if (p.machine != kNoId && p.machine < machines_.size() &&
      machines_[p.machine].hardware == p.hardware) {
    v.machine = p.machine;
  } else {
    if (p.machine != kNoId) Invalid(options_.names.planning, "new worker on an unknown machine");
    v.machine = NewMachine("m-" + v.name, p.hardware);
  }
  v.residency.assign(suite_->variants().size(), Residency::kAbsent);
  v.pinned = p.pinned < suite_->variants().size() ? p.pinned : kNoId;
  if (v.pinned != kNoId && checks_.max_rows(p.hardware, v.pinned) <= 0) {
    Invalid(options_.names.planning, "new worker pinned to variant '" +
                                         suite_->variants()[v.pinned].name +
                                         "', not profiled on its hardware");
    v.pinned = kNoId;
  }
  WorkerPlan dedication = p;
  dedication.pinned = v.pinned;
  v.model = PlannedModel(dedication, kNoId);
  v.quota = p.quota;
  v.phase = WorkerPhase::kStarting;
  v.active = false;
  views_.push_back(std::move(v));
  WorkerState st;
  st.lru.assign(suite_->variants().size(), 0);
  st.loaded_before.assign(suite_->variants().size(), false);
  states_.push_back(std::move(st));
  ++counters_.workers_added;
  const WorkerId w = views_.back().id;
  std::vector<VariantId> load = p.load;
  if (load.empty() && views_[w].pinned != kNoId) load.push_back(views_[w].pinned);
  for (VariantId var : p.prefetch) {
    if (var < suite_->variants().size() && std::find(load.begin(), load.end(), var) == load.end())
      views_[w].prefetch.push_back(var);
  }
  for (VariantId var : load) {
    if (var >= suite_->variants().size()) continue;
    if (views_[w].residency[var] != Residency::kAbsent) continue;
    ++states_[w].start_loads;
    SendLoad(w, var, now);
  }
  if (states_[w].start_loads == 0) {
    views_[w].phase = WorkerPhase::kActive;
    views_[w].active = true;
    MaybePrefetch(w, now);
  }
  return w;
}

void Engine::MaybePrefetch(WorkerId w, TimePoint now) {
  WorkerView& v = views_[w];
  WorkerState& st = states_[w];
  if (v.prefetch.empty() || v.phase != WorkerPhase::kActive || !v.active || v.busy || st.removing ||
      !st.queue.empty() || !st.lifecycle.empty() || st.start_loads > 0)
    return;
  const MachineView& m = machines_[v.machine];
  while (!v.prefetch.empty()) {
    const VariantId var = v.prefetch.front();
    v.prefetch.erase(v.prefetch.begin());
    if (v.residency[var] != Residency::kAbsent) continue;
    // A prefetch never evicts: what does not fit now is left out.
    if (m.memory_mb > 0 && m.used_mb + VariantMb(*suite_, var) > m.memory_mb) continue;
    SendLoad(w, var, now);
    return;
  }
}

void Engine::MaybeRetire(WorkerId w, TimePoint now) {
  WorkerView& v = views_[w];
  WorkerState& st = states_[w];
  if (!st.removing || v.phase == WorkerPhase::kRetired || v.busy || !st.queue.empty() ||
      st.start_loads > 0)
    return;
  v.phase = WorkerPhase::kRetired;
  v.active = false;
  RecountServing();
  // Its memory goes back to the machine (the executor is told to unload).
  for (VariantId var = 0; var < v.residency.size(); ++var) {
    if (v.residency[var] == Residency::kReady) SendUnload(w, var, now);
  }
}

void Engine::SetResidency(WorkerId w, VariantId v, Residency r) {
  WorkerView& view = views_[w];
  MachineView& m = machines_[view.machine];
  const bool held_before =
      view.residency[v] == Residency::kLoading || view.residency[v] == Residency::kReady;
  const bool held_after = r == Residency::kLoading || r == Residency::kReady;
  // Memory is reserved when a load is sent and returned when the unload is sent (the
  // executor runs a worker's actions in order, so the load after it finds it free).
  if (held_after && !held_before) m.used_mb += VariantMb(*suite_, v);
  if (!held_after && held_before) m.used_mb = std::max(0.0, m.used_mb - VariantMb(*suite_, v));
  view.residency[v] = r;
}

void Engine::SendLoad(WorkerId w, VariantId v, TimePoint now) {
  WorkerView& view = views_[w];
  if (view.residency[v] == Residency::kReady || view.residency[v] == Residency::kLoading) return;
  // Evict least recently used variants of the machine's workers while over its memory.
  MachineView& m = machines_[view.machine];
  const double need = VariantMb(*suite_, v);
  while (m.memory_mb > 0 && m.used_mb + need > m.memory_mb) {
    WorkerId victim_w = kNoId;
    VariantId victim_v = kNoId;
    for (WorkerId o = 0; o < views_.size(); ++o) {
      const WorkerView& ov = views_[o];
      if (ov.machine != view.machine) continue;
      const WorkerState& os = states_[o];
      for (VariantId x = 0; x < ov.residency.size(); ++x) {
        if (ov.residency[x] != Residency::kReady || x == ov.pinned) continue;
        if (o == w && x == v) continue;
        if (ov.busy && os.batch_variant == x) continue;  // running or about to run
        if (victim_w == kNoId || os.lru[x] < states_[victim_w].lru[victim_v]) {
          victim_w = o;
          victim_v = x;
        }
      }
    }
    if (victim_w == kNoId) break;  // nothing evictable: over-commit rather than deadlock
    SendUnload(victim_w, victim_v, now);
  }
  // A bound on the variants a worker holds (EngineOptions::max_resident_variants).
  const WorkerState& ws = states_[w];
  while (options_.max_resident_variants > 0) {
    int held = 0;
    VariantId victim = kNoId;
    for (VariantId x = 0; x < view.residency.size(); ++x) {
      if (view.residency[x] == Residency::kLoading) ++held;
      if (view.residency[x] != Residency::kReady) continue;
      ++held;
      if (x == view.pinned || (view.busy && ws.batch_variant == x)) continue;
      if (victim == kNoId || ws.lru[x] < ws.lru[victim]) victim = x;
    }
    if (held < options_.max_resident_variants || victim == kNoId) break;
    SendUnload(w, victim, now);
  }
  SetResidency(w, v, Residency::kLoading);
  LoadVariant a;
  a.id = next_action_id_++;
  a.worker = w;
  a.hardware = view.hardware;
  a.variant = v;
  a.sent = now;
  a.expected = suite_->variants()[v].load_time;
  states_[w].lifecycle.push_back({a.id, v, true, now});
  ++counters_.loads;
  ++counters_.actions_sent;
  ++in_flight_;
  // A reload: this worker held the variant before and unloaded or evicted it since.
  const bool reload = states_[w].loaded_before[v];
  states_[w].loaded_before[v] = true;
  metrics_.OnColdStart(reload);
  if (!model_metrics_.empty()) model_metrics_[suite_->variants()[v].task].OnColdStart(reload);
  executor_->Send(a);
}

void Engine::SendUnload(WorkerId w, VariantId v, TimePoint now) {
  SetResidency(w, v, Residency::kUnloading);
  UnloadVariant a;
  a.id = next_action_id_++;
  a.worker = w;
  a.hardware = views_[w].hardware;
  a.variant = v;
  a.sent = now;
  states_[w].lifecycle.push_back({a.id, v, false, now});
  ++counters_.unloads;
  ++counters_.actions_sent;
  ++in_flight_;
  executor_->Send(a);
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
  if (view.phase == WorkerPhase::kStarting || view.phase == WorkerPhase::kRetired) return;
  const bool shared = policies_.dispatch->shared_queue();
  if (shared && !view.active) return;  // retired: takes nothing more from the central queue
  ModelQueues& queues = shared ? central_ : st.queue;
  // A worker dedicated to a model (or pinned to one of its variants) serves it only.
  const TaskId only = view.model;
  const uint8_t* servable = checks_.servable(view.hardware);
  // One round: the models in EDF order of their queues' heads until one starts a batch. A
  // model whose policy waits, idles or errs is skipped for the rest of the round (its
  // earliest wait is kept), so every round ends.
  const uint64_t round = ++round_;
  TimePoint wake = kTimeInfinite;
  // Bounded: every iteration starts a batch, declines a model, or drops at least one query.
  while (!view.busy && !queues.empty()) {
    // From the shared queue a worker takes only models its hardware serves, leaving the
    // others to workers that do (multi-model pools of mixed hardware).
    ModelQueues::Queue* model = queues.Earliest(table_, only, round, shared ? servable : nullptr);
    if (model == nullptr) break;
    std::deque<uint32_t>& queue = model->slots;
    if (admission_.enabled() && DropExpiredHead(queues, *model, w, shared, now)) continue;
    BatchDecision& d = decision_;
    d.Clear();
    BatchingPolicy& batching = BatchingFor(model->task);
    batching.NextBatch(view, QueueView(&queue, &table_, model->arrival_ordered), now, &d);
    const bool run = d.kind == BatchDecision::Kind::kRun && !d.take.empty();
    if (!run) d.take.clear();
    std::sort(d.take.begin(), d.take.end());
    // Every position in range, none taken twice; otherwise the decision is rejected and
    // the queries it named in range are dropped as `internal` (at least the head, so a
    // policy that keeps erring cannot stall the queue).
    const size_t n = queue.size();
    bool bad = std::adjacent_find(d.take.begin(), d.take.end()) != d.take.end();
    for (const auto* list : {&d.take, &d.drop, &d.reject}) {
      for (uint32_t p : *list) bad = bad || p >= n;
    }
    if (bad) {
      Invalid(BatchingName(model->task),
              "positions out of range or taken twice (queue of " + std::to_string(n) + ")");
      positions_.clear();
      for (uint32_t p : d.take)
        if (p < n) positions_.push_back(p);
      if (positions_.empty()) positions_.push_back(0);
      positions_.erase(std::unique(positions_.begin(), positions_.end()), positions_.end());
      queues.Remove(*model, positions_, &scratch_slots_);
      if (!shared) SyncQueueView(w);
      for (uint32_t s : scratch_slots_) DropSlot(s, DropReason::kInternal, now);
      continue;
    }
    // Resolve positions to slots before the queue changes; a position in both lists runs.
    std::vector<uint32_t>& take_slots = removed_;
    take_slots.clear();
    for (uint32_t p : d.take) take_slots.push_back(queue[p]);
    // The batch's variant (a plan's pin overrides the policy's) and the engine's checks
    // of it (decision_checks.h): a refused batch is never applied.
    const VariantId v = view.pinned != kNoId ? view.pinned : d.variant;
    int64_t rows = 0;
    const BatchFault fault =
        run ? checks_.Check(view.hardware, v, take_slots, table_, &rows) : BatchFault::kNone;
    if (fault != BatchFault::kNone) {
      Invalid(BatchingName(model->task),
              BatchChecks::Describe(*suite_, fault, view.hardware, v, take_slots, table_, rows));
    } else if (run && admission_.enabled()) {
      if (TrimLateBatch(queues, *model, w, shared, v, now))
        continue;  // its first query could not make it even alone: dropped, ask again
      take_slots.resize(d.take.size());  // trimmed to a prefix
      rows = RowsOf(take_slots);
    }
    queues.Remove(*model, PositionsToRemove(queue, d), &scratch_slots_);
    if (!shared) {
      view.queue_length = st.queue.size();
      for (uint32_t s : scratch_slots_) view.queued_rows -= table_[s].size;
    }
    const bool dropped_any = !drop_slots_.empty() || !reject_slots_.empty();
    for (uint32_t s : drop_slots_) DropSlot(s, DropReason::kPolicy, now);
    for (uint32_t s : reject_slots_) DropSlot(s, DropReason::kUnservable, now);

    if (d.kind == BatchDecision::Kind::kWaitUntil) {
      wake = std::min(wake, std::max(d.wait_until, now + Duration(1)));
      model->declined = round;
      continue;
    }
    if (!run) {
      if (!dropped_any) model->declined = round;  // else: the policy cleared some, ask again
      continue;
    }
    if (fault != BatchFault::kNone) {
      // A policy bug must not lose queries: the refused batch's end as `internal` (its
      // drops and rejects, valid on their own, were applied), once each.
      for (uint32_t s : take_slots) DropSlot(s, DropReason::kInternal, now);
      continue;
    }
    StartBatch(w, v, model->task, take_slots, rows, now);
    return;
  }
  if (wake != kTimeInfinite && !view.busy) {
    st.wake = wake;
    wakes_.push({wake, w});
  }
}

const std::vector<uint32_t>& Engine::PositionsToRemove(const std::deque<uint32_t>& queue,
                                                       BatchDecision& d) {
  // Dropped (policy) and rejected (unservable) positions; a position also taken runs.
  drop_slots_.clear();
  reject_slots_.clear();
  // The usual decision has none: the sorted, unique `take` is the list as it is.
  if (d.drop.empty() && d.reject.empty()) return d.take;
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
  return positions_;
}

void Engine::StartBatch(WorkerId w, VariantId v, TaskId task, std::vector<uint32_t>& take_slots,
                        int64_t rows, TimePoint now) {
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  st.batch_slots.swap(take_slots);  // take_slots is scratch: no copy needed
  AddRunningRows(task, rows);
  st.batch_variant = v;
  st.batch_task = task;
  st.batch_formed = now;
  st.lru[v] = ++use_clock_;
  st.wake = kTimeInfinite;
  view.busy = true;
  ++busy_workers_;
  view.last_variant = v;
  if (view.residency[v] == Residency::kReady) {
    SendRun(w, now);
  } else {
    // Cold start: the batch waits for the load's result (a prefetch may be loading it).
    st.awaiting_load = v;
    metrics_.OnLoadWaited();
    if (!model_metrics_.empty()) model_metrics_[task].OnLoadWaited();
    SendLoad(w, v, now);
    view.busy_until = now + suite_->variants()[v].load_time;
  }
}

Duration Engine::ExpectedBatch(HardwareId h, VariantId v, int32_t rows) {
  // The profile's median at the batch's rows, memoised: this runs for every batch.
  const size_t key = static_cast<size_t>(h) * suite_->variants().size() + v;
  if (expected_.size() <= key) expected_.resize(key + 1);
  std::vector<Duration>& by_rows = expected_[key];
  const size_t r = static_cast<size_t>(std::max(rows, 0));
  if (r < by_rows.size() && by_rows[r] >= Duration(0)) return by_rows[r];
  const LatencyDistribution* d = suite_->Latency(h, v, rows);
  const Duration e = d && !d->empty() ? d->Quantile(0.5) : Duration(0);
  if (r < 4096) {  // bounded: rows beyond are computed each time
    if (by_rows.size() <= r) by_rows.resize(r + 1, Duration(-1));
    by_rows[r] = e;
  }
  return e;
}

void Engine::SendRun(WorkerId w, TimePoint now) {
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  batch_queries_.clear();
  int32_t rows = 0;
  TimePoint latest{};
  for (uint32_t s : st.batch_slots) {
    batch_queries_.push_back(table_[s]);
    rows += table_[s].size;
    latest = std::max(latest, table_[s].deadline);
  }
  RunBatch a;
  a.id = next_action_id_++;
  a.worker = w;
  a.hardware = view.hardware;
  a.variant = st.batch_variant;
  a.queries = batch_queries_;
  a.rows = rows;
  a.earliest_start = now;
  a.latest_start = latest;
  a.expected = ExpectedBatch(view.hardware, st.batch_variant, rows);
  st.running = a.id;
  ++counters_.actions_sent;
  ++in_flight_;
  if (admission_.enabled()) AdmissionFor(st.batch_task).OnBatch(w, rows, a.expected);
  const Duration estimate = executor_->Send(a);
  view.busy_until = now + (estimate > Duration(0) ? estimate : a.expected);
}

void Engine::OnResult(const ActionResult& r, TimePoint now) {
  if (r.worker >= states_.size()) {
    ++counters_.stale_results;
    Warn("engine: result of action " + std::to_string(r.id) + " names unknown worker " +
         std::to_string(r.worker));
    ReleaseOutputs(r);
    return;
  }
  WorkerState& st = states_[r.worker];
  if (r.id != 0 && r.id == st.running) {
    --in_flight_;
    st.running = 0;
    OnRunResult(r.worker, r, now);
    return;
  }
  for (size_t i = 0; i < st.lifecycle.size(); ++i) {
    if (st.lifecycle[i].id != r.id) continue;
    const PendingLifecycle p = st.lifecycle[i];
    st.lifecycle.erase(st.lifecycle.begin() + static_cast<ptrdiff_t>(i));
    --in_flight_;
    OnLifecycleResult(r.worker, p, r, now);
    return;
  }
  ++counters_.stale_results;  // a duplicate, or a result for an action never sent
  ReleaseOutputs(r);
}

void Engine::ReleaseOutputs(const ActionResult& r) {
  if (!options_.release_output) return;
  for (PayloadHandle h : r.outputs) {
    if (h != 0) options_.release_output(h);
  }
}

void Engine::OnLifecycleResult(WorkerId w, const PendingLifecycle& p, const ActionResult& r,
                               TimePoint now) {
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  if (!r.status.ok()) {
    ++counters_.failed_results;
    Warn("engine: " + std::string(p.load ? "loading" : "unloading") + " variant '" +
         suite_->variants()[p.variant].name + "' on " + view.name +
         " failed: " + r.status.ToString());
  }
  if (!p.load) {
    // Unloaded (or failed to: the executor no longer counts on it either way).
    if (view.residency[p.variant] == Residency::kUnloading)
      SetResidency(w, p.variant, Residency::kAbsent);
    return;
  }
  if (view.residency[p.variant] == Residency::kLoading) {
    SetResidency(w, p.variant, r.status.ok() ? Residency::kReady : Residency::kAbsent);
  }
  if (r.status.ok() && policies_.placement)
    policies_.placement->OnLoadComplete(w, p.variant, now - p.sent, now);
  // A load that lands on a worker retired meanwhile gives its memory back.
  if (view.phase == WorkerPhase::kRetired && view.residency[p.variant] == Residency::kReady)
    SendUnload(w, p.variant, now);
  if (st.start_loads > 0 && --st.start_loads == 0) {
    if (r.status.ok() || view.pinned == kNoId) {
      view.phase = st.removing ? WorkerPhase::kDraining : WorkerPhase::kActive;
      view.active = !st.removing;
    } else {
      st.removing = true;  // cannot serve its pinned variant: retire it
      view.phase = WorkerPhase::kDraining;
    }
    AccrueCost(now);
    RecomputeActiveCost();
    MaybeRetire(w, now);
    NotifyWorkersChanged();
    Redispatch(now);
  }
  if (st.awaiting_load == p.variant) {
    st.awaiting_load = kNoId;
    if (r.status.ok()) {
      SendRun(w, now);
    } else {
      FailBatch(w, r.status, now);
    }
  }
  MaybePrefetch(w, now);
}

void Engine::BecomeIdle(WorkerId w, TimePoint now) {
  (void)now;
  WorkerView& view = views_[w];
  WorkerState& st = states_[w];
  view.busy = false;
  --busy_workers_;
  st.running = 0;
  st.awaiting_load = kNoId;
}

void Engine::FailBatch(WorkerId w, const Status& status, TimePoint now) {
  WorkerState& st = states_[w];
  std::vector<uint32_t> slots;
  slots.swap(st.batch_slots);
  AddRunningRows(st.batch_task, -RowsOf(slots));
  BecomeIdle(w, now);
  Warn("engine: batch on " + views_[w].name + " failed (" + status.ToString() + "); " +
       std::to_string(slots.size()) + " queries re-queued or dropped");
  bool requeued = false;
  for (uint32_t s : slots) {
    if (table_[s].deadline <= now || status.code() == StatusCode::kDeadlineExceeded) {
      DropSlot(s, table_[s].deadline <= now ? DropReason::kExpired : DropReason::kExecutorError,
               now);
    } else if (++attempts_[s] >= options_.max_attempts) {
      DropSlot(s, DropReason::kExecutorError, now);
    } else {
      ++counters_.requeued;
      RequeueCentral(s);
      requeued = true;
    }
  }
  slots.clear();
  st.batch_slots.swap(slots);
  MaybeRetire(w, now);
  if (requeued) Redispatch(now);
  TryStart(w, now);
}

void Engine::OnRunResult(WorkerId w, const ActionResult& r, TimePoint now) {
  WorkerState& st = states_[w];
  WorkerView& view = views_[w];
  if (!r.status.ok()) {
    ++counters_.failed_results;
    ReleaseOutputs(r);
    FailBatch(w, r.status, now);
    return;
  }
  const int n = static_cast<int>(st.batch_slots.size());
  // The executor's own measure of the batch (at most its service as the engine saw it);
  // unknown (-1) when the executor reports neither begin nor end.
  const Duration exec_time = r.begin == TimePoint{} && r.end == TimePoint{}
                                 ? Duration(-1)
                                 : std::clamp(r.end - r.begin, Duration(0), now - st.batch_formed);
  metrics_.OnBatch(n, now - st.batch_formed);
  if (!model_metrics_.empty()) model_metrics_[st.batch_task].OnBatch(n, now - st.batch_formed);
  std::vector<uint32_t> slots;
  slots.swap(st.batch_slots);
  AddRunningRows(st.batch_task, -RowsOf(slots));
  // The policy's view of the batch, taken before Finish frees the slots.
  const bool have_solo = r.solo.size() == slots.size();
  const bool have_outputs = r.outputs.size() == slots.size();
  if (!have_outputs) ReleaseOutputs(r);  // not one per query: none is attributed
  completed_.clear();
  for (size_t i = 0; i < slots.size(); ++i) {
    const Query& q = table_[slots[i]];
    completed_.push_back({q.id, q.app, have_solo ? r.solo[i] : Duration(-1)});
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    const Query& q = table_[slots[i]];
    QueryRecord rec = RecordOf(q);
    rec.variant = st.batch_variant;
    rec.worker = w;
    rec.batch_size = n;
    rec.start = st.batch_formed;
    rec.finish = now;
    rec.exec_time = exec_time;
    rec.met_slo = now <= q.deadline;
    if (have_outputs) rec.output = r.outputs[i];
    Finish(slots[i], rec);
  }
  slots.clear();
  st.batch_slots.swap(slots);
  BecomeIdle(w, now);
  BatchCompletion done;
  done.now = now;
  done.worker = w;
  done.hardware = view.hardware;
  done.variant = st.batch_variant;
  done.duration = now - st.batch_formed;
  done.requests = completed_;
  BatchingFor(st.batch_task).OnBatchComplete(done);
  if (policies_.placement) policies_.placement->OnBatchComplete(done);
  MaybeRetire(w, now);
  RunDispatch(now);
  StartThenRedispatch(w, now);
  MaybePrefetch(w, now);
}

void Engine::StartThenRedispatch(WorkerId w, TimePoint now) {
  // The worker's policy may drop what it holds instead of running it (ORLOJ's timeouts):
  // then it is idle, and a dispatcher that waits for idle instances (kairos) was asked
  // while it still held them; with no further event the central queue would wait for
  // ever. Asked again only then: a worker that held nothing changed nothing, and a second
  // call would draw a noisy dispatcher's random numbers for the same decision.
  const bool held = !states_[w].queue.empty();
  TryStart(w, now);
  if (held && Drained(w)) RunDispatch(now);
}

void Engine::OnTimer(TimePoint now) {
  while (!wakes_.empty() && wakes_.top().at <= now) {
    Wake wk = wakes_.top();
    wakes_.pop();
    WorkerState& st = states_[wk.worker];
    if (st.wake != wk.at) continue;  // superseded
    st.wake = kTimeInfinite;
    StartThenRedispatch(wk.worker, now);
  }
}

TimePoint Engine::NextWakeup() const {
  // Stale entries may surface early; OnTimer skips them, so this is a safe lower bound.
  return wakes_.empty() ? kTimeInfinite : wakes_.top().at;
}

void Engine::DropAllQueued(TimePoint now) {
  std::vector<uint32_t> slots;
  central_.TakeAll(&slots);
  for (uint32_t s : slots) DropSlot(s, DropReason::kShutdown, now);
  for (WorkerId w = 0; w < states_.size(); ++w) {
    slots.clear();
    states_[w].queue.TakeAll(&slots);
    for (uint32_t s : slots) DropSlot(s, DropReason::kShutdown, now);
    SyncQueueView(w);
  }
}

bool Engine::DropExpiredHead(ModelQueues& queues, ModelQueues::Queue& queue, WorkerId w,
                             bool shared, TimePoint now) {
  // Queues are in deadline order: the expired ones are at the front.
  bool dropped = false;
  const AdmissionControl& admission = AdmissionFor(queue.task);
  while (!queue.slots.empty() && admission.Expired(table_[queue.slots.front()].deadline, now)) {
    const uint32_t slot = queues.PopFront(queue);
    if (!shared) {
      views_[w].queue_length = queues.size();
      views_[w].queued_rows -= table_[slot].size;
    }
    DropSlot(slot, DropReason::kExpired, now);
    dropped = true;
  }
  return dropped;
}

bool Engine::TrimLateBatch(ModelQueues& queues, ModelQueues::Queue& model, WorkerId w, bool shared,
                           VariantId v, TimePoint now) {
  const std::deque<uint32_t>* queue = &model.slots;
  // `take` is ascending and queues are in deadline order: its first query is due first,
  // and a batch that ends by that deadline ends by every one of its queries'.
  std::vector<uint32_t>& take = decision_.take;
  if (take.empty() || v >= suite_->variants().size()) return false;
  const HardwareId h = views_[w].hardware;
  const Query& first = table_[(*queue)[take[0]]];
  if (first.deadline < now + ExpectedBatch(h, v, first.size)) {
    // Late even alone on the policy's variant: dropped before it holds the worker.
    positions_.assign(1, take[0]);
    queues.Remove(model, positions_, &scratch_slots_);
    if (!shared) SyncQueueView(w);
    DropSlot(scratch_slots_[0], DropReason::kExpired, now);
    return true;
  }
  // The largest prefix the profile expects to finish by that deadline; the rest of the
  // batch stays queued for the next one (instead of every query of it ending late).
  int32_t rows = 0;
  size_t keep = 0;
  for (; keep < take.size(); ++keep) {
    rows += table_[(*queue)[take[keep]]].size;
    if (keep > 0 && first.deadline < now + ExpectedBatch(h, v, rows)) break;
  }
  take.resize(keep);
  return false;
}

int64_t Engine::RowsOf(const std::vector<uint32_t>& slots) const {
  int64_t rows = 0;
  for (uint32_t s : slots) rows += table_[s].size;
  return rows;
}

bool Engine::Cancel(QueryId id, TimePoint now) {
  // Rare (a client disconnected): a scan of the queues is cheap enough.
  auto take = [&](ModelQueues* queues, WorkerId w) {
    uint32_t slot = 0;
    if (!queues->Erase(id, table_, &slot)) return false;
    if (w != kNoId) SyncQueueView(w);
    DropSlot(slot, DropReason::kCancelled, now);
    return true;
  };
  if (take(&central_, kNoId)) return true;
  for (WorkerId w = 0; w < states_.size(); ++w) {
    if (take(&states_[w].queue, w)) return true;
  }
  return false;
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
  // Every member named: a default-initialised record is zeroed with `rep stos`, which
  // cost a measurable share of the simulator's time (one record per query).
  return QueryRecord{.id = q.id,
                     .task = q.task,
                     .app = q.app,
                     .size = q.size,
                     .priority = q.priority,
                     .cookie = q.cookie,
                     .payload = q.payload,
                     .output = 0,
                     .variant = kNoId,
                     .worker = kNoId,
                     .batch_size = 0,
                     .arrival = q.arrival,
                     .deadline = q.deadline,
                     .start = {},
                     .finish = {},
                     .exec_time = Duration(-1),
                     .dropped = false,
                     .drop_reason = DropReason::kNone,
                     .met_slo = false};
}

void Engine::Finish(uint32_t slot, QueryRecord& r) {
  double acc = r.variant < variant_accuracy_.size() ? variant_accuracy_[r.variant] : 0.0;
  metrics_.OnDone(r, acc);
  if (!model_metrics_.empty() && r.task < model_metrics_.size())
    model_metrics_[r.task].OnDone(r, acc);
  --in_system_;
  system_rows_ -= r.size;
  if (r.task < model_system_rows_.size()) model_system_rows_[r.task] -= r.size;
  FreeSlot(slot);
  if (sink_) sink_(r);
}

void Engine::CloseSeries(TimePoint end) {
  AccrueCost(end);
}

MetricsSummary Engine::Summarize(TimePoint end) const {
  MetricsSummary m = metrics_.Summarize(end, static_cast<int>(views_.size()));
  double dt = end > cost_clock_ ? ToSeconds(end - cost_clock_) : 0;
  m.cost_usd = cost_usd_ + active_price_per_hour_ * dt / 3600.0;
  m.core_seconds = core_seconds_ + active_cores_ * dt;
  m.cost_per_hour = m.elapsed_s > 0 ? m.cost_usd * 3600.0 / m.elapsed_s : active_price_per_hour_;
  return m;
}

std::vector<MetricsSummary> Engine::SummarizeByModel(TimePoint end) const {
  std::vector<MetricsSummary> out;
  if (model_metrics_.empty()) {  // one task: the model's summary is the pool's
    out.push_back(Summarize(end));
    return out;
  }
  out.reserve(model_metrics_.size());
  // The cost since the last accrual, as Summarize adds it for the pool.
  const double dt = end > cost_clock_ ? ToSeconds(end - cost_clock_) : 0;
  for (size_t t = 0; t < model_metrics_.size(); ++t) {
    MetricsSummary s = model_metrics_[t].Summarize(end, static_cast<int>(views_.size()));
    s.cost_usd += model_price_per_hour_[t] * dt / 3600.0;
    s.core_seconds += model_cores_[t] * dt;
    s.cost_per_hour = s.elapsed_s > 0 ? s.cost_usd * 3600.0 / s.elapsed_s : 0;
    out.push_back(s);
  }
  return out;
}

std::string Engine::DescribeBacklog() const {
  static constexpr const char* kPhase[] = {"starting", "active", "draining", "retired"};
  std::string out = "central queue " + std::to_string(central_.size());
  std::map<std::string, size_t> central_by_model;
  central_.ForEach([&](const ModelQueues::Queue& q) {
    for (uint32_t slot : q.slots) ++central_by_model[suite_->tasks()[table_[slot].task].name];
  });
  for (const auto& [model, n] : central_by_model) out += " " + model + ":" + std::to_string(n);
  size_t active = 0;
  for (const WorkerView& v : views_) active += v.active ? 1 : 0;
  out += "; " + std::to_string(active) + " of " + std::to_string(views_.size()) + " workers active";
  for (size_t w = 0; w < views_.size(); ++w) {
    const WorkerView& v = views_[w];
    if (states_[w].queue.empty()) continue;
    out += "; " + v.name + " (" + suite_->hardware()[v.hardware].name + ", " +
           kPhase[static_cast<int>(v.phase)] + (v.busy ? ", busy" : "") +
           (v.model < suite_->tasks().size() ? ", model " + suite_->tasks()[v.model].name : "") +
           (v.pinned != kNoId ? ", pinned " + suite_->variants()[v.pinned].name : "") + ") " +
           std::to_string(states_[w].queue.size());
  }
  return out;
}

}  // namespace sloserve
