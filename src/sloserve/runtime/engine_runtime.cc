#include "sloserve/runtime/engine_runtime.h"

#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>

#include "sloserve/core/echo_name.h"
#include "sloserve/profile/exec_time_model.h"
#include "sloserve/runtime/priority_metrics.h"
#include "sloserve/server/unknown_model.h"

namespace sloserve {

StatusOr<std::unique_ptr<EngineRuntime>> EngineRuntime::Create(const ProfileSuite* suite,
                                                               RuntimeOptions options) {
  if (!suite) return InvalidArgumentError("runtime: no profile suite");
  if (options.max_queue < 1) return InvalidArgumentError("server.max_queue: must be >= 1");
  if (options.payload_bytes < (size_t{1} << 10) || options.payload_bytes > (size_t{1} << 40)) {
    return InvalidArgumentError("runtime payload_bytes: " + std::to_string(options.payload_bytes) +
                                " is outside [1 KiB, 1 TiB]");
  }
  std::unique_ptr<EngineRuntime> rt(new EngineRuntime(suite, options));
  ASSIGN_OR_RETURN(rt->deployment_, ResolveDeployment(*suite, options.deployment));
  ASSIGN_OR_RETURN(PolicySet policies, MakePolicySet(options.policy));
  for (const auto& [name, spec] : options.model_policies) {
    const std::optional<TaskId> task = suite->FindTask(name);
    if (!task) return InvalidArgumentError("model '" + EchoName(name) + "': not in the suite");
    StatusOr<PolicySet> own = MakePolicySet(spec);
    if (!own.ok()) return own.status().WithPrefix("model '" + EchoName(name) + "' policy");
    if (policies.model_batching.size() <= *task) policies.model_batching.resize(*task + 1);
    policies.model_batching[*task] = std::move(own->batching);
  }
  if (options.make_planning) policies.planning = options.make_planning();
  rt->payloads_ = std::make_unique<PayloadStore>(options.payload_bytes);
  if (options.make_executor) {
    rt->executor_ = options.make_executor(*suite, rt->payloads_.get());
    if (!rt->executor_) return InvalidArgumentError("runtime: make_executor returned no executor");
    rt->executor_->UseClock(&rt->clock_);  // its times on the engine's timeline
  } else {
    rt->executor_ =
        std::make_unique<ProfileExecutor>(ServiceTimeModel(suite, options.service, options.seed));
  }
  auto observer =
      std::make_unique<LoadObservingExecutor>(std::move(rt->executor_), suite->variants().size());
  rt->load_observer_ = observer.get();
  rt->executor_ = std::move(observer);
  DriverOptions dopts;
  dopts.plan_interval = options.plan_interval;
  dopts.offline_threads_enabled = true;  // offline work on its own thread, off the engine's
  dopts.offline_threads = 1;
  dopts.clock = &rt->clock_;  // posts taken in during a step are handled at their time
  rt->driver_ = std::make_unique<Driver>(dopts);
  // Results read on another component's thread (remote workers' replies on serve's gRPC
  // queue thread, RemoteExecutor::DrainOn) are handled there when the engine thread is idle.
  rt->driver_->SetInlineStepper([r = rt.get()] { return r->StepPostedInline(); });
  EngineOptions& eopts = rt->engine_options_;
  eopts.max_central_queue = options.max_queue;
  eopts.max_worker_queue = options.max_queue;
  eopts.admission = options.admission;
  eopts.max_workers_of_type = options.max_workers_of_type;
  eopts.task = rt->deployment_.task;
  eopts.slo = rt->deployment_.slo;
  eopts.submit_offline = rt->driver_->OfflineSubmitter();
  eopts.names = PolicyNamesOf(options.policy);
  eopts.release_output = [store = rt->payloads_.get()](PayloadHandle h) { store->Release(h); };
  eopts.progress = [self = rt.get()](const std::string& what, int done, int total) {
    self->ReportProgress(what, done, total);
  };
  eopts.live = true;
  eopts.latency_phases = true;  // the final summary's queue / exec / handoff (metrics.h)
  eopts.offline_cancel = rt->driver_->offline_cancel();
  eopts.degraded = [self = rt.get()](const std::string& note) { self->SetDegraded(note); };
  std::vector<TypeCounters> by_type(suite->hardware().size());
  for (const WorkerSpec& w : rt->deployment_.workers) ++by_type[w.hardware].workers;
  rt->row_capacity_ = RowCapacity(suite);
  for (HardwareId h = 0; h < by_type.size(); ++h) {
    if (by_type[h].workers > 0) rt->hardware_types_.push_back(h);
  }
  // The models served: every task with a variant profiled on a worker's hardware, each
  // with its own SLO, fastest latency and row limit (served_models.h).
  ServedModelsSpec models;
  models.deployment_task = rt->deployment_.task;
  models.deployment_slo = rt->deployment_.slo;
  models.model_slos = options.model_slos;
  models.input_shape = options.input_shape;
  models.slo_check_quantile = options.deployment.slo_check_quantile;
  models.priority_levels = options.admission.priority_levels;
  ASSIGN_OR_RETURN(rt->served_,
                   ServedModels::Build(*suite, rt->hardware_types_, rt->row_capacity_, models));
  eopts.model_slo = rt->served_.engine_model_slo();
  // Each model is shed early by its own admission (early_shed.h).
  {
    std::vector<Duration> slos(suite->tasks().size(), Duration::zero());  // zero: no probe
    for (const TaskInfo& info : rt->served_.infos()) {
      if (const std::optional<TaskId> t = rt->served_.Find(info.name)) slos[*t] = info.default_slo;
    }
    rt->shed_probe_ = rt->early_shed_.SetSlos(slos);
  }
  rt->pending_policies_ = std::make_unique<PolicySet>(std::move(policies));
  if (!options.deferred_init) RETURN_IF_ERROR(rt->Initialize());
  // App ids follow the suite's exec_hist app order, as in `sim` (per-app execution times).
  const ExecTimeTable exec_times = ExecTimeTable::Build(*suite);
  for (const std::string& app : exec_times.apps())
    rt->apps_.emplace(app, static_cast<AppId>(rt->apps_.size()));
  rt->profiled_apps_ = rt->apps_.size();

  const size_t tasks = suite->tasks().size();
  rt->model_state_ = std::make_unique<std::atomic<int>[]>(tasks);
  for (size_t t = 0; t < tasks; ++t) rt->model_state_[t] = static_cast<int>(ModelState::kLoaded);
  {
    MutexLock lock(rt->engine_mu_);
    rt->by_type_ = std::move(by_type);
    rt->model_ops_.resize(tasks);
    rt->unloaded_.resize(tasks);
    rt->in_system_by_task_.assign(tasks, 0);
    // Again, with these: the one Initialize published before they were set.
    if (rt->engine_) rt->PublishAndAnswer(rt->Now(), /*force=*/true);
  }
  return rt;
}

Status EngineRuntime::Initialize() {
  {
    MutexLock lock(inbox_mu_);
    progress_started_ = std::chrono::steady_clock::now();
  }
  auto engine = Engine::Create(suite_, deployment_.workers, std::move(*pending_policies_),
                               executor_.get(), engine_options_, options_.seed);
  pending_policies_.reset();
  Status status = engine.status();
  if (engine.ok()) {
    MutexLock lock(engine_mu_);
    engine_ = std::move(engine).value();
    // Runs inside engine calls, which the engine thread makes holding engine_mu_.
    engine_->set_sink([this](const QueryRecord& r) REQUIRES(engine_mu_) { Answer(r); });
    driver_->Bind(engine_.get(), executor_.get());
    PublishAndAnswer(Now(), /*force=*/true);  // published before the runtime serves
  }
  MutexLock lock(inbox_mu_);
  initialized_ = true;
  init_status_ = status;
  init_cv_.NotifyAll();
  return status;
}

bool EngineRuntime::Initialized() const {
  MutexLock lock(inbox_mu_);
  return initialized_;
}

Status EngineRuntime::WaitUntilInitialized() {
  MutexLock lock(inbox_mu_);
  init_cv_.Wait(inbox_mu_, [&]() REQUIRES(inbox_mu_) { return initialized_; });
  return init_status_;
}

void EngineRuntime::ReportProgress(const std::string& what, int done, int total) {
  const auto now = std::chrono::steady_clock::now();
  std::string line = what + ": " + std::to_string(done) + "/" + std::to_string(total);
  {
    MutexLock lock(inbox_mu_);
    const double elapsed = std::chrono::duration<double>(now - progress_started_).count();
    if (done > 0 && total > done) {  // estimate of the total grows as sets are refined
      char eta[64];
      std::snprintf(eta, sizeof eta, ", at least ~%.0f s left", elapsed / done * (total - done));
      line += eta;
    }
    starting_what_ = line;
    if (now - last_progress_log_ < std::chrono::seconds(2) && done < total) return;
    last_progress_log_ = now;
  }
  Log(line);
}

void EngineRuntime::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "sloserve: %s\n", line.c_str());
  }
}

void EngineRuntime::SetDegraded(const std::string& note) {
  std::string line;
  {
    MutexLock lock(inbox_mu_);
    if (degraded_ == note) return;
    line = note.empty() ? "no longer degraded (was: " + degraded_ + ")" : "degraded: " + note;
    degraded_ = note;
  }
  Log(line);
}

std::string EngineRuntime::ReadyNote() const {
  // An elastic set's free slots are down to the engine but not workers that failed.
  const int vacant = executor_ == nullptr ? 0 : executor_->vacant_workers();
  const int down = std::max(0, UnreachableWorkers() - vacant);
  std::string workers;
  if (down > 0) {
    workers = std::to_string(down) + " of " +
              std::to_string(static_cast<int>(deployment_.workers.size()) - vacant) +
              " remote workers down";
  }
  MutexLock lock(inbox_mu_);
  if (degraded_.empty()) return workers;
  return degraded_ + " (" + starting_what_ + ")" + (workers.empty() ? "" : "; " + workers);
}

int EngineRuntime::UnreachableWorkers() const {
  return load_observer_ == nullptr ? 0 : load_observer_->unreachable_workers();
}

bool EngineRuntime::NoWorkerReachable() const {
  const int down = UnreachableWorkers();  // one atomic load; 0 but with remote workers
  return down > 0 && down >= static_cast<int>(deployment_.workers.size());
}

std::string EngineRuntime::NoWorkerReason() const {
  if (!NoWorkerReachable()) return "";
  const int vacant = executor_ == nullptr ? 0 : executor_->vacant_workers();
  const int present = static_cast<int>(deployment_.workers.size()) - vacant;
  if (vacant > 0 && present <= 0) {
    return "no worker reachable: the remote worker set is empty (" + std::to_string(vacant) +
           " free slots)";
  }
  const std::string workers = std::to_string(present);
  return "no worker reachable: " + workers + " of " + workers + " remote workers down";
}

EngineRuntime::EngineRuntime(const ProfileSuite* suite, RuntimeOptions options)
    : suite_(suite), options_(std::move(options)) {}

EngineRuntime::~EngineRuntime() {
  Stop(Duration(0));
  // The executor before the driver: it may post its last results while it goes (calls it
  // cancels; a remote worker's replies that the engine thread, which read them, did not
  // wait for before it ended), and they go into the driver's inbox.
  executor_.reset();
  load_observer_ = nullptr;
  driver_.reset();  // joins the offline pool before the policies its jobs came from go
}

TimePoint EngineRuntime::Now() const {
  return clock_.Now();
}

void EngineRuntime::Start() {
  MutexLock lock(inbox_mu_);
  if (thread_.joinable() || stopping_) return;
  accepting_ = true;
  thread_ = std::thread([this] { Loop(); });
}

bool EngineRuntime::Ready() const {
  if (NoWorkerReachable()) return false;
  MutexLock lock(inbox_mu_);
  return accepting_ && initialized_ && init_status_.ok();
}

std::string EngineRuntime::NotReadyReason() const {
  MutexLock lock(inbox_mu_);
  if (stopping_) return "shutting down";
  if (!initialized_) return "starting: " + starting_what_;
  if (!init_status_.ok()) return "failed to start: " + init_status_.message();
  if (!accepting_) return "not started";
  return NoWorkerReason();
}

namespace {

std::string TooManyRows(const std::string& model, int rows, int limit, Duration slo) {
  char slo_ms[32];
  std::snprintf(slo_ms, sizeof slo_ms, "%g", ToMillis(slo));
  return "model '" + model + "' serves at most " + std::to_string(limit) +
         " rows per request within a " + slo_ms + " ms SLO (max_batch_size; no variant is " +
         "profiled to finish more in time), got " + std::to_string(rows);
}

InferOutcome ShedOutcome() {
  InferOutcome out;
  out.reason = DropReasonName(DropReason::kShed);
  out.status = ResourceExhaustedError(
      "overloaded: the SLO cannot be met behind the queued requests, retry later");
  return out;
}

}  // namespace

EngineRuntime::Intake EngineRuntime::IntakeOf(const InferRequest& request,
                                              std::optional<TaskId> task) {
  if (!accepting_ || !initialized_ || !init_status_.ok()) return Intake::kRefuse;
  // No worker to run it: refused now rather than queued until its deadline. A request
  // accepted just before the last worker went down waits in the engine's queue for a
  // worker to rejoin or its deadline, and ends once either way.
  if (NoWorkerReachable()) return Intake::kNoWorker;
  // Under overload, a request admission would refuse anyway is refused here, without
  // the two thread hand-offs to the engine and back (early_shed.h).
  if (!options_.early_shed || !task) return Intake::kAccept;  // unknown: the engine answers
  const bool shed =
      early_shed_.Refuse(PriorityLevel(request.priority, options_.admission.priority_levels,
                                       options_.admission.default_priority),
                         shed_probe_[*task], request.slo == served_.SloOf(*task), request.rows);
  return shed ? Intake::kShed : Intake::kAccept;
}

Driver::EngineStep EngineRuntime::ArrivalStep(Pending p) {
  return [this, p = std::move(p)](Engine&, TimePoint now) mutable {
    engine_mu_.AssertHeld();  // the engine thread runs driver steps holding it
    Admit(std::move(p), now);
  };
}

void EngineRuntime::Refuse(Intake intake, const std::function<void(InferOutcome)>& done) const {
  if (intake == Intake::kShed) return done(ShedOutcome());
  InferOutcome out;
  if (intake == Intake::kNoWorker) {
    const std::string why = NoWorkerReason();  // may have changed since: say it as it was
    out.status = UnavailableError(
        (why.empty() ? std::string("no worker reachable: every remote worker was down") : why) +
        "; retry later");
    return done(std::move(out));
  }
  std::string why = NotReadyReason();
  out.status = UnavailableError("server is not accepting requests (" +
                                (why.empty() ? std::string("not started") : why) + ")");
  done(std::move(out));
}

void EngineRuntime::Submit(InferRequest request, std::function<void(InferOutcome)> done) {
  Intake intake;
  bool inline_step = false;
  const std::optional<TaskId> task = served_.Find(request.task);  // read-only: no lock
  {
    MutexLock lock(inbox_mu_);
    intake = IntakeOf(request, task);
    // Posted under inbox_mu_, so Stop() (which clears accepting_ under it) happens after
    // and the engine thread's last steps still admit and answer it.
    if (intake == Intake::kAccept) {
      std::vector<Driver::EngineStep> steps;
      steps.push_back(ArrivalStep(Pending{std::move(request), std::move(done)}));
      inline_step = options_.inline_steps && !stopping_ && driver_->BeginInline();
      if (inline_step) {
        driver_->PostArrivalsInline(steps);
      } else {
        driver_->PostArrivals(steps);
        return;
      }
    }
  }
  if (inline_step) return StepInline();
  Refuse(intake, done);
}

void EngineRuntime::SubmitAll(std::vector<Submission>& batch) {
  std::vector<Driver::EngineStep> steps;
  steps.reserve(batch.size());
  std::vector<std::pair<Intake, std::function<void(InferOutcome)>>> refused;
  bool inline_step = false;
  std::vector<std::optional<TaskId>> tasks;  // read-only lookups, before the lock
  tasks.reserve(batch.size());
  for (const Submission& s : batch) tasks.push_back(served_.Find(s.request.task));
  {
    MutexLock lock(inbox_mu_);
    size_t i = 0;
    for (Submission& s : batch) {
      const Intake intake = IntakeOf(s.request, tasks[i++]);
      if (intake == Intake::kAccept) {
        steps.push_back(ArrivalStep(Pending{std::move(s.request), std::move(s.done)}));
      } else {
        refused.emplace_back(intake, std::move(s.done));
      }
    }
    // Like Submit's, under inbox_mu_; one wake-up of the engine thread for all of them,
    // or none when this thread steps for it.
    inline_step = !steps.empty() && options_.inline_steps && !stopping_ && driver_->BeginInline();
    if (inline_step) {
      driver_->PostArrivalsInline(steps);
    } else {
      driver_->PostArrivals(steps);
    }
  }
  batch.clear();
  if (inline_step) StepInline();
  for (const auto& [intake, done] : refused) Refuse(intake, done);
}

void EngineRuntime::StepLocked(TimePoint now, bool force_publish) {
  const uint64_t controls_before = driver_->controls_handled();
  driver_->Step(now);
  // A worker marked down or back (or another control) is published at once: /metrics'
  // active-worker gauges showed the old count until a request came.
  force_publish = force_publish || driver_->controls_handled() != controls_before;
  if (engine_->admission().enabled()) {
    early_shed_.Publish(
        [this, now](TaskId model, Duration slo, int32_t level) {
          return engine_->WouldShed(model, slo, level, now);
        },
        [this](TaskId model, Duration slo) { return engine_->MaxRowsAlone(model, slo); },
        engine_->admission().priority_levels());
  }
  if (active_model_ops_ > 0) AdvanceModelOps(now);
  // After the step and what it published (admission's state), like a lock taken now.
  PublishAndAnswer(now, force_publish);
}

void EngineRuntime::StepInline() {
  // The engine thread sleeps and waits for EndInline should it wake: this thread holds
  // engine_mu_ for the step as that thread would. The answers of a zero-time batch (an
  // emulated executor's, a fast in-process one's) are given here, on the caller's thread.
  MutexLock engine_lock(engine_mu_);
  StepLocked(Now(), /*force_publish=*/false);
  driver_->EndInline();
}

bool EngineRuntime::StepPostedInline() {
  {
    MutexLock lock(inbox_mu_);
    if (!options_.inline_steps || stopping_ || !driver_->BeginInline(/*posted=*/true)) return false;
  }
  StepInline();
  return true;
}

void EngineRuntime::Stop(Duration grace) {
  {
    MutexLock lock(inbox_mu_);
    if (!thread_.joinable()) {
      accepting_ = false;
      return;
    }
    accepting_ = false;
    stopping_ = true;
    driver_->CancelOffline();  // a policy set still generating ends early
    drain_deadline_ = Now() + grace;
    abandon_deadline_ = drain_deadline_ + grace;
    drain_deadline_set_ = true;
  }
  driver_->Wake();
  thread_.join();
}

void EngineRuntime::Admit(Pending p, TimePoint now) {
  Query q;
  const std::optional<TaskId> task = served_.Find(p.request.task);
  if (!task) {
    InferOutcome out;
    out.status = NotFoundError(UnknownModelMessage(p.request.task, served_.names()));
    Reply(std::move(p.done), std::move(out));
    return;
  }
  q.task = *task;
  if (const auto state = static_cast<ModelState>(model_state_[q.task].load());
      state != ModelState::kLoaded) {
    InferOutcome out;
    out.status = FailedPreconditionError(
        "model '" + p.request.task + "' is not loaded (" +
        (state == ModelState::kUnloaded ? std::string("unloaded")
                                        : std::string(ModelStateName(state))) +
        "); load it with POST /v2/repository/models/" + p.request.task + "/load");
    Reply(std::move(p.done), std::move(out));
    return;
  }
  // Apps are the profiled ones; every other name (clients choose them) shares one
  // "unprofiled" id, so the set stays bounded whatever clients send. A dynamic model's
  // query of that id runs on the variant's pooled execution-time distribution (executor
  // and ORLOJ alike); /metrics says how many.
  const auto app = apps_.find(p.request.app);
  q.app = app != apps_.end() ? app->second : static_cast<AppId>(profiled_apps_);
  if (profiled_apps_ > 0 && q.app >= profiled_apps_) ++unknown_app_queries_;
  q.size = std::max<int32_t>(1, p.request.rows);
  q.priority = p.request.priority;
  Duration slo = p.request.slo;
  if (slo.count() <= 0) slo = served_.SloOf(q.task);  // the model's served SLO
  q.deadline = now + slo;
  // More rows than any variant here finishes within the SLO: refused before it queues,
  // as a bad request (400), not an SLO miss. One row is always served.
  if (q.size > 1) {
    if (const int limit = row_capacity_.MaxRows(hardware_types_, q.task, slo); q.size > limit) {
      ++bad_requests_;
      InferOutcome out;
      out.reason = "bad_request";
      out.status = InvalidArgumentError(TooManyRows(p.request.task, q.size, limit, slo));
      Reply(std::move(p.done), std::move(out));
      return;
    }
  }
  if (!p.request.inputs.empty()) {
    StatusOr<PayloadHandle> payload = payloads_->Put(std::move(p.request.inputs));
    if (!payload.ok()) {  // answered at once: too many bytes of tensors in the system
      InferOutcome out;
      out.status = ResourceExhaustedError("the server holds too much tensor data, retry later (" +
                                          payload.status().message() + ")");
      Reply(std::move(p.done), std::move(out));
      return;
    }
    q.payload = *payload;
  }
  q.cookie = next_cookie_++;
  waiting_.emplace(q.cookie,
                   Waiting{std::move(p.done), q.payload, 0, p.request.client_gone, q.task});
  ++in_system_by_task_[q.task];
  const uint64_t cookie = q.cookie;
  const QueryId id = engine_->Submit(q, now);
  // Submit may have answered it already (shed); otherwise remember its id for ClientGone.
  if (auto w = waiting_.find(cookie); w != waiting_.end()) {
    w->second.query = id;
    // Its client may have gone before it got here (ClientGone's step ran first).
    if (w->second.client_gone && w->second.client_gone->load()) engine_->Cancel(id, now);
  }
}

void EngineRuntime::ClientGone() {
  {
    MutexLock lock(inbox_mu_);
    if (!accepting_ && !stopping_) return;
  }
  driver_->PostControl([this](Engine& engine, TimePoint now) {
    engine_mu_.AssertHeld();  // the engine thread runs driver steps holding it
    // Rare, and waiting_ is bounded by admission: a scan finds every flagged request.
    std::vector<QueryId> gone;
    for (const auto& [cookie, w] : waiting_) {
      if (w.client_gone && w.client_gone->load() && w.query != 0) gone.push_back(w.query);
    }
    for (QueryId id : gone) engine.Cancel(id, now);  // running ones finish normally
  });
}

void EngineRuntime::Answer(const QueryRecord& r) {
  // The query is done with its input whatever happened; its output is copied out below.
  if (r.payload != 0) payloads_->Release(r.payload);
  std::shared_ptr<const TensorSet> outputs;
  if (r.output != 0) {
    outputs = payloads_->Get(r.output);
    payloads_->Release(r.output);
  }
  auto it = waiting_.find(r.cookie);
  if (it == waiting_.end()) return;
  std::function<void(InferOutcome)> done = std::move(it->second.done);
  --in_system_by_task_[it->second.task];
  waiting_.erase(it);
  InferOutcome out;
  if (r.dropped) {
    out.reason = DropReasonName(r.drop_reason);
    switch (r.drop_reason) {
      case DropReason::kQueueFull:
        out.status = ResourceExhaustedError("queue full: the server is overloaded, retry later");
        break;
      case DropReason::kShed:
        out = ShedOutcome();
        break;
      case DropReason::kCancelled:
        out.status = UnavailableError("cancelled: the client disconnected");
        break;
      case DropReason::kShutdown:
        out.status = UnavailableError("server shutting down before the request was served");
        break;
      case DropReason::kUnservable:
        out.status = FailedPreconditionError(
            "no variant on the worker it was sent to can serve this request's " +
            std::to_string(r.size) + " rows within its SLO");
        break;
      case DropReason::kInternal:
        out.status = InternalError("the scheduler rejected an invalid decision for this request");
        break;
      case DropReason::kExecutorError:
        // The engine ends its queued queries so when the last worker goes down.
        out.status = NoWorkerReachable()
                         ? UnavailableError(NoWorkerReason() + "; retry later")
                         : UnavailableError("execution failed on every attempt; retry later");
        break;
      default:
        out.status = Status(StatusCode::kDeadlineExceeded, "dropped: the SLO could not be met");
    }
  } else {
    const WorkerView& worker = engine_->workers()[r.worker];
    out.variant = suite_->variants()[r.variant].name;
    out.worker = worker.name;
    out.hardware = suite_->hardware()[worker.hardware].name;
    TypeCounters& type = by_type_[worker.hardware];
    ++type.served;
    type.late += r.met_slo ? 0 : 1;
    type.rows += r.size;
    type.service += r.service_time();
    out.queue_time = r.queue_time();
    out.compute_time = r.service_time();
    out.exec_time = r.exec_time;
    out.batch_size = r.batch_size;
    out.met_slo = r.met_slo;
    if (outputs) out.outputs = *outputs;
  }
  Reply(std::move(done), std::move(out));
}

void EngineRuntime::Loop() {
  // Batch completions are timers on this thread: Linux's default 50 us timer slack would
  // make every emulated batch finish late by up to that much (measured 87-119 us mean
  // lateness per batch with it, docs/orloj.md "Figure 14"). 1 ns asks for exact wake-ups.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  // Named for per-thread wake-up counts and perf (docs/benchmarks.md).
  pthread_setname_np(pthread_self(), "engine");
  bool initialized = false;
  {
    MutexLock lock(inbox_mu_);
    initialized = initialized_;
  }
  // A deferred start initialises here, off the network threads; a failed one leaves
  // Submit refusing requests with the reason.
  if (!initialized && !Initialize().ok()) return;
  if (!engine_) return;
  while (true) {
    bool stopping = false;
    TimePoint drain_deadline{}, abandon_deadline{};
    {
      MutexLock lock(inbox_mu_);
      stopping = stopping_;
      drain_deadline = drain_deadline_;
      abandon_deadline = abandon_deadline_;
    }
    // Sleeps until a result, timer or plan tick is due, a request arrives, or Stop()'s
    // next deadline.
    driver_->WaitForWork(clock_, !stopping                ? kTimeInfinite
                                 : Now() < drain_deadline ? drain_deadline
                                                          : abandon_deadline);
    {
      MutexLock lock(inbox_mu_);
      stopping = stopping_;
      drain_deadline = drain_deadline_;
      abandon_deadline = abandon_deadline_;
    }
    MutexLock engine_lock(engine_mu_);
    const TimePoint now = Now();
    StepLocked(now, /*force_publish=*/stopping);
    if (stopping) {
      if (now >= drain_deadline) {
        engine_->DropAllQueued(now);
        PublishAndAnswer(now, /*force=*/true);
      }
      // Past the deadline, running batches may finish within the grace again; past that
      // their queries are answered below without waiting for the workers.
      if (engine_->in_system() == 0 || now >= abandon_deadline ||
          (now >= drain_deadline && engine_->actions_in_flight() == 0))
        break;
    }
  }
  // Anything still waiting (never launched) is answered, never lost.
  for (auto& [cookie, waiting] : waiting_) {
    payloads_->Release(waiting.payload);
    InferOutcome out;
    out.status = UnavailableError(
        "server shut down before the request was served (the shutdown drain time ran out)");
    waiting.done(std::move(out));
  }
  waiting_.clear();
  MutexLock engine_lock(engine_mu_);
  PublishAndAnswer(Now(), /*force=*/true);
  for (TaskId t = 0; t < model_ops_.size(); ++t) {
    if (!model_ops_[t].active) continue;
    FinishModelOp(t, model_ops_[t].load ? ModelState::kUnloaded : ModelState::kLoaded,
                  UnavailableError("server shut down before the model was " +
                                   std::string(model_ops_[t].load ? "loaded" : "unloaded")));
  }
}

ModelState EngineRuntime::StateOf(std::string_view task) const {
  const auto t = served_.Find(std::string(task));
  return t ? static_cast<ModelState>(model_state_[*t].load()) : ModelState::kUnloaded;
}

void EngineRuntime::SetModelLoaded(const std::string& task, bool load,
                                   std::function<void(Status)> done) {
  const auto t = served_.Find(task);
  if (!t) {
    done(NotFoundError(UnknownModelMessage(task, served_.names())));
    return;
  }
  {
    MutexLock lock(inbox_mu_);
    if (accepting_ && initialized_ && init_status_.ok()) {
      // Under inbox_mu_, like Submit: a Stop() after it still runs the step.
      driver_->PostControl(
          [this, task = *t, load, done = std::move(done)](Engine&, TimePoint now) mutable {
            engine_mu_.AssertHeld();  // the engine thread runs driver steps holding it
            StartModelOp(task, load, std::move(done), now);
          });
      return;
    }
  }
  const std::string why = NotReadyReason();
  done(UnavailableError("server is not accepting requests (" +
                        (why.empty() ? std::string("not started") : why) + ")"));
}

void EngineRuntime::StartModelOp(TaskId task, bool load, std::function<void(Status)> done,
                                 TimePoint now) {
  ModelOp& op = model_ops_[task];
  const std::string& name = suite_->tasks()[task].name;
  if (op.active) {
    if (op.load == load) {
      op.waiters.push_back(std::move(done));  // the same operation: answered with it
    } else {
      done(UnavailableError("model '" + name + "' is being " + (op.load ? "loaded" : "unloaded") +
                            "; retry when that is done"));
    }
    return;
  }
  const auto state = static_cast<ModelState>(model_state_[task].load());
  if (state == (load ? ModelState::kLoaded : ModelState::kUnloaded)) {
    done(OkStatus());  // already so
    return;
  }
  op.active = true;
  op.load = load;
  op.waiters.push_back(std::move(done));
  ++active_model_ops_;
  model_state_[task] = static_cast<int>(load ? ModelState::kLoading : ModelState::kUnloading);
  if (load) {
    // What the unload released, except on workers retired since.
    auto& targets = unloaded_[task];
    std::erase_if(targets, [&](const auto& wv) {
      return engine_->workers()[wv.first].phase == WorkerPhase::kRetired;
    });
    for (const auto& [w, v] : targets) engine_->RequestLoad(w, v, now);
  }
  AdvanceModelOps(now);
}

void EngineRuntime::AdvanceModelOps(TimePoint now) {
  const auto& workers = engine_->workers();
  for (TaskId t = 0; t < model_ops_.size(); ++t) {
    if (!model_ops_[t].active) continue;
    if (model_ops_[t].load) {
      std::string failed;
      bool loading = false;
      for (const auto& [w, v] : unloaded_[t]) {
        const Residency r = workers[w].residency[v];
        loading = loading || r == Residency::kLoading;
        if (r != Residency::kReady && r != Residency::kLoading) {
          failed += (failed.empty() ? "'" : ", '") + suite_->variants()[v].name + "' on " +
                    workers[w].name;
        }
      }
      if (loading) continue;
      if (failed.empty()) {
        unloaded_[t].clear();
        FinishModelOp(t, ModelState::kLoaded, OkStatus());
      } else {
        // The variants that did load stay resident; a later load retries the others.
        FinishModelOp(
            t, ModelState::kUnloaded,
            UnavailableError("loading model '" + suite_->tasks()[t].name + "' failed: " + failed +
                             " did not load (the executor's reason is in the log); "
                             "the model stays unloaded"));
      }
      continue;
    }
    if (in_system_by_task_[t] > 0) continue;  // its requests finish first
    bool pending = false;
    for (WorkerId w = 0; w < workers.size(); ++w) {
      for (VariantId v : suite_->VariantsOfTask(t)) {
        const Residency r = workers[w].residency[v];
        if (r == Residency::kReady && engine_->RequestUnload(w, v, now)) {
          unloaded_[t].emplace_back(w, v);
          pending = true;
        }
        // A load in flight (a prefetch) is unloaded once it lands.
        pending = pending || r == Residency::kLoading || r == Residency::kUnloading;
      }
    }
    if (!pending) FinishModelOp(t, ModelState::kUnloaded, OkStatus());
  }
}

void EngineRuntime::FinishModelOp(TaskId task, ModelState state, const Status& status) {
  ModelOp& op = model_ops_[task];
  model_state_[task] = static_cast<int>(state);
  std::vector<std::function<void(Status)>> waiters;
  waiters.swap(op.waiters);
  op.active = false;
  --active_model_ops_;
  for (auto& done : waiters) done(status);
}

EngineRuntime::EngineSnapshot EngineRuntime::TakeSnapshot(TimePoint now) const {
  EngineSnapshot snap;
  snap.summary = engine_->Summarize(now);
  snap.by_level = engine_->metrics().PriorityCounts(options_.admission.priority_levels);
  snap.counters = engine_->counters();
  snap.by_type = by_type_;
  snap.by_type.resize(suite_->hardware().size());  // empty at the first publish (Create)
  for (TypeCounters& t : snap.by_type) t.workers = t.active = 0;
  for (const WorkerView& w : engine_->workers()) {
    snap.queued += w.queue_length;
    snap.busy += w.busy ? 1 : 0;
    snap.active += w.active ? 1 : 0;
    // The workers of each type now: a planning policy adds, deactivates and retires them
    // (a retired one no longer counts; a deactivated one does, as it may serve again).
    if (w.phase != WorkerPhase::kRetired) ++snap.by_type[w.hardware].workers;
    if (w.active) ++snap.by_type[w.hardware].active;
  }
  snap.unknown_apps = unknown_app_queries_;
  snap.summary.bad_requests = bad_requests_;
  return snap;
}

std::optional<EngineRuntime::EngineSnapshot> EngineRuntime::Snapshot() const {
  bool serving = false;
  {
    MutexLock lock(inbox_mu_);
    serving = accepting_ && initialized_ && init_status_.ok();
  }
  std::shared_ptr<const EngineSnapshot> published;
  {
    MutexLock lock(published_mu_);
    published = published_;
  }
  // The next scrape gets one as of the engine thread's next step; this one does not wait.
  if (serving && !snapshot_wanted_.exchange(true, std::memory_order_relaxed)) driver_->Wake();
  std::optional<EngineSnapshot> snap;
  if (published) {
    snap = *published;
  } else {  // before the engine's first one: nothing has happened yet
    MutexLock lock(engine_mu_);
    if (!engine_) return std::nullopt;
    snap = TakeSnapshot(Now());
  }
  early_shed_.AddTo(snap->summary, snap->by_level);
  return snap;
}

void EngineRuntime::Reply(std::function<void(InferOutcome)> done, InferOutcome out) {
  step_answers_.emplace_back(std::move(done), std::move(out));
}

void EngineRuntime::PublishAndAnswer(TimePoint now, bool force) {
  const bool wanted = snapshot_wanted_.exchange(false, std::memory_order_relaxed);
  if (force || wanted || !step_answers_.empty()) {
    auto snap = std::make_shared<const EngineSnapshot>(TakeSnapshot(now));
    MutexLock lock(published_mu_);
    published_ = std::move(snap);
  }
  std::vector<std::pair<std::function<void(InferOutcome)>, InferOutcome>> answers;
  answers.swap(step_answers_);
  for (auto& [done, out] : answers) done(std::move(out));
}

MetricsSummary EngineRuntime::Summary() {
  std::optional<EngineSnapshot> snap = Snapshot();
  return snap ? std::move(snap->summary) : MetricsSummary{};
}

MetricsSummary EngineRuntime::FinalSummary() {
  MetricsSummary m = Summary();
  // Not in the snapshot each step publishes (three more histograms to read): read here,
  // under the engine's lock.
  MutexLock lock(engine_mu_);
  if (engine_) m.phases = engine_->metrics().Phases();
  return m;
}

}  // namespace sloserve

namespace sloserve {

std::string EngineRuntime::PrometheusMetrics() const {
  const std::optional<EngineSnapshot> snap = Snapshot();
  if (!snap) return "";  // still starting: nothing measured yet
  const MetricsSummary& m = snap->summary;
  const std::vector<TypeCounters>& by_type = snap->by_type;
  std::string out;
  auto line = [&](const char* name, const char* type, const char* help, double value,
                  const char* labels = "") {
    char buf[1024];
    std::snprintf(buf, sizeof buf, "# HELP %s %s\n# TYPE %s %s\n%s%s %.17g\n", name, help, name,
                  type, name, labels, value);
    out += buf;
  };
  line("sloserve_queries_arrived_total", "counter", "Queries admitted to the engine.",
       static_cast<double>(m.arrived));
  out +=
      "# HELP sloserve_queries_finished_total Queries by outcome.\n"
      "# TYPE sloserve_queries_finished_total counter\n";
  out += "sloserve_queries_finished_total{outcome=\"met\"} " + std::to_string(m.met) + "\n";
  out += "sloserve_queries_finished_total{outcome=\"late\"} " + std::to_string(m.late) + "\n";
  out += "sloserve_queries_finished_total{outcome=\"dropped\"} " + std::to_string(m.dropped) + "\n";
  line("sloserve_queries_shed_total", "counter",
       "Queries refused by admission control (answered 429; not SLO misses).",
       static_cast<double>(m.shed));
  line("sloserve_queries_shed_early_total", "counter",
       "Of the shed queries, those refused on the network thread, without reaching the engine "
       "(admission was refusing every query of their priority level).",
       static_cast<double>(early_shed_.refused()));
  AppendPriorityMetrics(snap->by_level, out);
  line("sloserve_queries_expired_total", "counter",
       "Queued queries dropped before running: their deadline could no longer be met.",
       static_cast<double>(m.expired));
  line("sloserve_queries_cancelled_total", "counter",
       "Queued queries dropped because their client disconnected.",
       static_cast<double>(m.cancelled));
  // The summary gauges cover the whole run (since the server started); rates over a window
  // come from the counters (rate(), increase()) and the histograms (histogram_quantile()).
  line("sloserve_goodput_qps", "gauge",
       "Queries that met their SLO per second, averaged since the server started (for a "
       "window: rate(sloserve_queries_finished_total{outcome=\"met\"}[5m])).",
       m.goodput_qps);
  line("sloserve_accuracy_ratio", "gauge",
       "Mean accuracy (0-1) of the variants that answered the queries that met their SLO, "
       "since the server started.",
       m.accuracy / 100);
  line("sloserve_accuracy_percent", "gauge",
       "Deprecated (Prometheus ratios are 0-1): sloserve_accuracy_ratio x 100.", m.accuracy);
  line("sloserve_slo_violation_ratio", "gauge",
       "(late + dropped) / arrived since the server started (for a window, from "
       "sloserve_queries_finished_total and sloserve_queries_arrived_total).",
       m.violation_rate);
  line("sloserve_latency_p99_seconds", "gauge",
       "p99 latency of the queries completed since the server started (for a window: "
       "histogram_quantile(0.99, rate(sloserve_request_duration_seconds_bucket[5m])).",
       m.p99_ms / 1e3);
  line("sloserve_queued_queries", "gauge", "Queries waiting in worker queues.",
       static_cast<double>(snap->queued));
  line("sloserve_busy_workers", "gauge", "Workers running a batch.",
       static_cast<double>(snap->busy));
  line("sloserve_active_workers", "gauge", "Workers receiving queries.",
       static_cast<double>(snap->active));
  line("sloserve_workers_unreachable", "gauge",
       "Remote workers marked down (unreachable or not answering); with all of them down the "
       "server is not ready and refuses requests (503).",
       static_cast<double>(
           std::max(0, UnreachableWorkers() - (executor_ ? executor_->vacant_workers() : 0))));
  if (const int vacant = executor_ ? executor_->vacant_workers() : 0; vacant > 0) {
    line("sloserve_worker_slots_free", "gauge",
         "Slots of an elastic remote worker set without a worker (down to the engine, not "
         "counted in sloserve_workers_unreachable).",
         static_cast<double>(vacant));
  }
  // One series per worker with where it runs: 1 while it is reachable (in-process workers
  // always are), 0 while its executor reports it down.
  out +=
      "# HELP sloserve_worker_up Whether each worker is reachable (1) or marked down (0).\n"
      "# TYPE sloserve_worker_up gauge\n";
  for (size_t w = 0; w < deployment_.workers.size(); ++w) {
    const std::string& address =
        w < options_.worker_addresses.size() ? options_.worker_addresses[w] : std::string("local");
    const bool down = load_observer_ != nullptr && load_observer_->Unreachable(w);
    out += "sloserve_worker_up{worker=\"w" + std::to_string(w) + "\",address=\"" + address +
           "\"} " + (down ? "0" : "1") + "\n";
  }
  line("sloserve_cold_starts_total", "counter", "Variant loads on a worker.",
       static_cast<double>(m.cold_starts));
  line("sloserve_reloads_total", "counter",
       "Variant loads on a worker that had loaded the variant before (unloaded or evicted "
       "since).",
       static_cast<double>(m.reloads));
  line("sloserve_cold_starts_waited_total", "counter",
       "Batches that waited for their variant's load (the other loads were ahead of need: "
       "preloads, prefetches).",
       static_cast<double>(m.cold_starts_waited));
  line("sloserve_core_seconds_total", "counter",
       "Cores of the active and starting workers x seconds (a planner's scaling).", m.core_seconds);
  line("sloserve_worker_actions_total", "counter", "Actions sent to executors.",
       static_cast<double>(snap->counters.actions_sent));
  line("sloserve_failed_results_total", "counter", "Executor results that reported a failure.",
       static_cast<double>(snap->counters.failed_results));
  line("sloserve_stale_results_total", "counter",
       "Executor results for no action in flight (duplicates, unknown ids).",
       static_cast<double>(snap->counters.stale_results));
  line("sloserve_invalid_decisions_total", "counter",
       "Policy decisions the engine rejected (queries dropped as internal).",
       static_cast<double>(snap->counters.invalid_decisions));
  line("sloserve_requeued_queries_total", "counter", "Queries re-queued after a failed batch.",
       static_cast<double>(snap->counters.requeued));
  line("sloserve_unknown_app_queries_total", "counter",
       "Queries naming no app or an app without an execution-time profile (served with the "
       "variant's pooled distribution).",
       static_cast<double>(snap->unknown_apps));
  // One series per hardware type of the deployment, so a heterogeneous deployment shows
  // which instance types served which queries.
  auto per_type = [&](const char* name, const char* type, const char* help, auto value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (HardwareId h = 0; h < by_type.size(); ++h) {
      if (by_type[h].workers == 0 && by_type[h].served == 0) continue;
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s{hardware=\"%s\"} %.17g\n", name,
                    suite_->hardware()[h].name.c_str(), static_cast<double>(value(by_type[h])));
      out += buf;
    }
  };
  // Cold starts by variant: how many loads, how long they took.
  const auto loads = load_observer_->Snapshot();
  auto per_variant = [&](const char* name, const char* help, auto value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
    for (VariantId v = 0; v < loads.size(); ++v) {
      if (loads[v].loads == 0) continue;
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s{variant=\"%s\"} %.17g\n", name,
                    suite_->variants()[v].name.c_str(), static_cast<double>(value(loads[v])));
      out += buf;
    }
  };
  // Each served variant's profiled accuracy (0-1), so a dashboard can weigh the answered
  // requests by variant over any window (docs/grafana/sloserve.json's accuracy panel).
  out +=
      "# HELP sloserve_variant_accuracy_ratio Profiled accuracy (0-1) of each variant served.\n"
      "# TYPE sloserve_variant_accuracy_ratio gauge\n";
  for (const TaskInfo& task : served_.infos()) {
    for (const std::string& name : task.variants) {
      const std::optional<VariantId> v = suite_->FindVariant(name);
      if (!v) continue;
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "sloserve_variant_accuracy_ratio{model=\"%s\",variant=\"%s\"} %.17g\n",
                    task.name.c_str(), name.c_str(), suite_->variants()[*v].accuracy / 100);
      out += buf;
    }
  }
  using Loads = LoadObservingExecutor::VariantLoads;
  per_variant("sloserve_variant_loads_total", "Variant loads on workers (cold starts), by variant.",
              [](const Loads& l) { return l.loads; });
  per_variant("sloserve_variant_load_failures_total", "Variant loads that failed, by variant.",
              [](const Loads& l) { return l.failed; });
  per_variant("sloserve_variant_load_seconds_total",
              "Summed duration of successful variant loads, by variant.",
              [](const Loads& l) { return ToSeconds(l.total); });
  per_type("sloserve_workers", "gauge",
           "Workers of each hardware type now (added and deactivated ones too, not retired ones).",
           [](const TypeCounters& c) { return c.workers; });
  per_type("sloserve_workers_active", "gauge",
           "Workers of each hardware type receiving queries now (sums to "
           "sloserve_active_workers).",
           [](const TypeCounters& c) { return c.active; });
  per_type("sloserve_queries_served_total", "counter", "Completed queries by hardware type.",
           [](const TypeCounters& c) { return c.served; });
  per_type("sloserve_queries_served_late_total", "counter",
           "Completed queries past their deadline, by hardware type.",
           [](const TypeCounters& c) { return c.late; });
  per_type("sloserve_rows_served_total", "counter", "Rows of completed queries by hardware type.",
           [](const TypeCounters& c) { return c.rows; });
  per_type("sloserve_service_seconds_total", "counter",
           "Service time (batch start to completion) of completed queries by hardware type.",
           [](const TypeCounters& c) { return ToSeconds(c.service); });
  return out;
}

}  // namespace sloserve
