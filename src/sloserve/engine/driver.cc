#include "sloserve/engine/driver.h"

#include <algorithm>
#include <optional>

namespace sloserve {

Driver::Driver(DriverOptions options) : options_(std::move(options)) {
  if (options_.offline_threads_enabled) {
    const int n = std::clamp(options_.offline_threads, 1, 16);
    for (int i = 0; i < n; ++i) pool_.emplace_back([this] { PoolLoop(); });
  }
}

Driver::~Driver() {
  CancelOffline();  // a job still running polls it and ends early
  {
    MutexLock lock(pool_mu_);
    pool_stop_ = true;
    pool_queue_.clear();  // not started: dropped (their publish would find no engine)
  }
  pool_cv_.NotifyAll();
  for (std::thread& t : pool_) t.join();
}

std::function<void(OfflineJob)> Driver::OfflineSubmitter() {
  return [this](OfflineJob job) { SubmitOffline(std::move(job)); };
}

void Driver::Bind(Engine* engine, WorkerExecutor* executor) {
  engine_ = engine;
  {
    ExecutorWait* wait = executor->TakeWait();
    MutexLock lock(inbox_mu_);
    wait_ = wait;
  }
  executor->Attach(this);
  next_plan_ = engine->has_planning() ? now_ + options_.plan_interval : kTimeInfinite;
}

void Driver::SubmitOffline(OfflineJob job) {
  if (!job.work) return;
  ++offline_pending_;
  if (!options_.offline_threads_enabled) {
    // Deterministic: the work happens now, its result lands after the virtual delay.
    TimedJob t;
    t.at = now_ + options_.offline_delay;
    t.seq = seq_++;
    t.publish = job.work();
    timed_jobs_.push(std::move(t));
    return;
  }
  {
    MutexLock lock(pool_mu_);
    pool_queue_.push_back(std::move(job));
  }
  pool_cv_.NotifyOne();
}

void Driver::PoolLoop() {
  while (true) {
    OfflineJob job;
    {
      MutexLock lock(pool_mu_);
      pool_cv_.Wait(pool_mu_,
                    [&]() REQUIRES(pool_mu_) { return pool_stop_ || !pool_queue_.empty(); });
      if (pool_stop_) return;
      job = std::move(pool_queue_.front());
      pool_queue_.pop_front();
    }
    std::function<void()> publish = job.work();
    bool notify;
    {
      MutexLock lock(inbox_mu_);
      inbox_jobs_.push_back(publish ? std::move(publish) : [] {});
      inbox_nonempty_.store(true, std::memory_order_release);
      notify = WakeLocked();
    }
    if (notify) inbox_cv_.NotifyOne();
  }
}

bool Driver::WakeLocked() {
  if (wait_ == nullptr || sleeping_ == Sleep::kOnCondVar) return true;
  if (sleeping_ == Sleep::kInExecutor && std::this_thread::get_id() != waiting_thread_) {
    wait_->Wake();
  }
  return false;
}

void Driver::PostAt(ActionResult&& result, TimePoint at) {
  uint32_t index;
  if (free_results_.empty()) {
    index = static_cast<uint32_t>(result_slab_.size());
    result_slab_.push_back(std::move(result));
  } else {
    index = free_results_.back();
    free_results_.pop_back();
    result_slab_[index] = std::move(result);
  }
  TimedResult t;
  t.at = at;
  t.seq = seq_++;
  t.index = index;
  timed_results_.push(t);
}

void Driver::Post(ActionResult result) {
  // Notified under the lock: an executor thread must not touch the driver once the
  // driver's thread may have taken the result and the runtime destroyed the driver
  // (ThreadSanitizer, LibTorch executor at runtime shutdown).
  MutexLock lock(inbox_mu_);
  inbox_results_.push_back(std::move(result));
  inbox_nonempty_.store(true, std::memory_order_release);
  if (WakeLocked()) inbox_cv_.NotifyOne();
}

void Driver::PostArrival(EngineStep step) {
  bool notify;
  {
    MutexLock lock(inbox_mu_);
    // Later ones find the driver awake already.
    const bool first = !inbox_nonempty_.load(std::memory_order_relaxed);
    inbox_arrivals_.push_back(std::move(step));
    inbox_nonempty_.store(true, std::memory_order_release);
    notify = first && WakeLocked();
  }
  if (notify) inbox_cv_.NotifyOne();
}

void Driver::PostArrivals(std::vector<EngineStep>& steps) {
  if (steps.empty()) return;
  bool notify;
  {
    MutexLock lock(inbox_mu_);
    const bool first = !inbox_nonempty_.load(std::memory_order_relaxed);
    for (EngineStep& step : steps) inbox_arrivals_.push_back(std::move(step));
    inbox_nonempty_.store(true, std::memory_order_release);
    notify = first && WakeLocked();
  }
  steps.clear();
  if (notify) inbox_cv_.NotifyOne();
}

void Driver::PostReachability(WorkerId worker, bool reachable, std::optional<ActionResult> result) {
  // A control step (step 3 of Step's order), so the result it carries is handled after
  // the engine knows; a shared_ptr because EngineStep is a copyable std::function.
  auto carried = std::make_shared<std::optional<ActionResult>>(std::move(result));
  PostControl([this, worker, reachable, carried](Engine& engine, TimePoint now) {
    engine.SetWorkerReachable(worker, reachable, now);
    if (*carried) posted_results_.push_back(std::move(**carried));
  });
}

void Driver::PostControl(EngineStep step) {
  bool notify;
  {
    MutexLock lock(inbox_mu_);
    inbox_controls_.push_back(std::move(step));
    inbox_nonempty_.store(true, std::memory_order_release);
    notify = WakeLocked();
  }
  if (notify) inbox_cv_.NotifyOne();
}

void Driver::Wake() {
  bool notify;
  {
    MutexLock lock(inbox_mu_);
    woken_ = true;
    notify = WakeLocked();
  }
  if (notify) inbox_cv_.NotifyOne();
}

void Driver::PostQuietly(ActionResult result) {
  MutexLock lock(inbox_mu_);
  inbox_results_.push_back(std::move(result));
  inbox_nonempty_.store(true, std::memory_order_release);
  // No wake-up: StepOrWake follows. (A driver's thread that is awake sees the inbox before
  // it sleeps; one stepped for by another thread is woken by its EndInline.)
}

void Driver::StepOrWake() {
  if (inline_stepper_ && inline_stepper_()) return;
  // Notified under the lock, as in Post.
  MutexLock lock(inbox_mu_);
  if (WakeLocked()) inbox_cv_.NotifyOne();
}

bool Driver::BeginInline(bool posted) {
  MutexLock lock(inbox_mu_);
  if (wait_ != nullptr || sleeping_ != Sleep::kOnCondVar || inline_busy_ || woken_ ||
      (!posted && inbox_nonempty_.load(std::memory_order_relaxed))) {
    return false;  // awake, about to wake, or asleep in the executor's wait
  }
  inline_busy_ = true;
  return true;
}

void Driver::PostArrivalsInline(std::vector<EngineStep>& steps) {
  MutexLock lock(inbox_mu_);
  for (EngineStep& step : steps) inbox_arrivals_.push_back(std::move(step));
  if (!steps.empty()) inbox_nonempty_.store(true, std::memory_order_release);
  steps.clear();
}

void Driver::EndInline() {
  bool notify = false;
  {
    MutexLock lock(inbox_mu_);
    inline_busy_ = false;
    // The caller stepped: what is due now may come before the thread's deadline.
    if (NextDue() < sleep_until_) woken_ = true;
    // Also when the thread woke meanwhile (its deadline, a post) and waits for this.
    notify =
        woken_ || inbox_nonempty_.load(std::memory_order_relaxed) || sleeping_ != Sleep::kOnCondVar;
  }
  if (notify) inbox_cv_.NotifyOne();
}

bool Driver::DrainInbox() {
  if (!inbox_nonempty_.load(std::memory_order_acquire)) return false;
  MutexLock lock(inbox_mu_);
  for (ActionResult& r : inbox_results_) posted_results_.push_back(std::move(r));
  for (auto& j : inbox_jobs_) finished_jobs_.push_back(std::move(j));
  for (auto& c : inbox_controls_) controls_.push_back(std::move(c));
  for (auto& a : inbox_arrivals_) arrivals_in_.push_back(std::move(a));
  inbox_results_.clear();
  inbox_jobs_.clear();
  inbox_controls_.clear();
  inbox_arrivals_.clear();
  inbox_nonempty_.store(false, std::memory_order_relaxed);
  return true;
}

TimePoint Driver::NextDue() const {
  TimePoint t = next_plan_;
  if (!timed_results_.empty()) t = std::min(t, timed_results_.top().at);
  if (!timed_jobs_.empty()) t = std::min(t, timed_jobs_.top().at);
  if (engine_) t = std::min(t, engine_->NextWakeup());
  if (arrivals_) t = std::min(t, arrivals_->NextArrival());
  if (!posted_results_.empty() || !finished_jobs_.empty() || !controls_.empty() ||
      !arrivals_in_.empty()) {
    t = std::min(t, now_);
  }
  return t;
}

int64_t Driver::Step(TimePoint now) {
  now_ = std::max(now_, now);
  now = now_;
  int64_t handled = 0;
  Engine& engine = *engine_;
  while (true) {
    if (DrainInbox() && options_.clock != nullptr) {
      now_ = std::max(now_, options_.clock->Now());
      now = now_;
    }
    ++handled;
    // 1. results
    if (!timed_results_.empty() && timed_results_.top().at <= now) {
      HandleTimedResult(engine, now);
      continue;
    }
    if (!posted_results_.empty()) {
      ActionResult r = std::move(posted_results_.front());
      posted_results_.pop_front();
      engine.OnResult(r, now);
      continue;
    }
    // 2. finished offline jobs
    if (!timed_jobs_.empty() && timed_jobs_.top().at <= now) {
      HandleTimedJob();
      continue;
    }
    if (!finished_jobs_.empty()) {
      std::function<void()> publish = std::move(finished_jobs_.front());
      finished_jobs_.pop_front();
      --offline_pending_;
      if (publish) publish();
      continue;
    }
    // 3. control messages
    if (!controls_.empty()) {
      EngineStep c = std::move(controls_.front());
      controls_.pop_front();
      c(engine, now);
      ++controls_handled_;
      continue;
    }
    // 4. timers
    if (engine.NextWakeup() <= now) {
      engine.OnTimer(now);
      continue;
    }
    // 5. the plan tick
    if (next_plan_ <= now) {
      engine.OnPlanTick(now);
      next_plan_ = now + options_.plan_interval;
      continue;
    }
    // 6. one arrival
    if (!arrivals_in_.empty()) {
      EngineStep a = std::move(arrivals_in_.front());
      arrivals_in_.pop_front();
      a(engine, now);
      continue;
    }
    if (arrivals_ && arrivals_->NextArrival() <= now) {
      arrivals_->AdmitNext(engine, now);
      continue;
    }
    --handled;
    return handled;
  }
}

void Driver::HandleTimedResult(Engine& engine, TimePoint now) {
  const uint32_t index = timed_results_.top().index;
  timed_results_.pop();
  // Handled in place (the deque keeps it where it is while the engine posts more) and
  // only then is its slot reused.
  engine.OnResult(result_slab_[index], now);
  free_results_.push_back(index);
}

void Driver::HandleTimedJob() {
  // top() is const; the element is popped right after, so moving its closure out is safe.
  std::function<void()> publish = std::move(const_cast<TimedJob&>(timed_jobs_.top()).publish);
  timed_jobs_.pop();
  --offline_pending_;
  if (publish) publish();
}

int64_t Driver::RunVirtual(ManualClock* clock) {
  Engine& engine = *engine_;
  int64_t handled = 0;
  while (true) {
    if (inbox_nonempty_.load(std::memory_order_acquire) || !posted_results_.empty() ||
        !finished_jobs_.empty() || !controls_.empty() || !arrivals_in_.empty()) {
      handled += Step(now_);  // something posted from outside: the general path
      continue;
    }
    const TimePoint tr = timed_results_.empty() ? kTimeInfinite : timed_results_.top().at;
    const TimePoint tj = timed_jobs_.empty() ? kTimeInfinite : timed_jobs_.top().at;
    const TimePoint tw = engine.NextWakeup();
    const TimePoint ta = arrivals_ ? arrivals_->NextArrival() : kTimeInfinite;
    const TimePoint others = std::min(std::min(tr, tj), std::min(tw, ta));
    if (others == kTimeInfinite) break;  // only plan ticks would be left
    const TimePoint t = std::min(others, next_plan_);
    if (t > now_) now_ = t;
    clock->Set(now_);
    ++handled;
    // Step's order at one instant: results, offline jobs, timers, plan tick, arrival.
    if (tr <= now_) {
      HandleTimedResult(engine, now_);
    } else if (tj <= now_) {
      HandleTimedJob();
    } else if (tw <= now_) {
      engine.OnTimer(now_);
    } else if (next_plan_ <= now_) {
      engine.OnPlanTick(now_);
      next_plan_ = now_ + options_.plan_interval;
    } else {
      arrivals_->AdmitNext(engine, now_);
    }
  }
  return handled;
}

void Driver::WaitForWork(const SteadyClock& clock, TimePoint limit) {
  ExecutorWait* wait = nullptr;
  bool in_executor = false;
  bool slept_on_cv = false;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  {
    MutexLock lock(inbox_mu_);
    const TimePoint next = std::min(NextDue(), limit);
    auto ready = [&]() REQUIRES(inbox_mu_) {
      return woken_ || inbox_nonempty_.load(std::memory_order_relaxed);
    };
    wait = wait_;
    const TimePoint now = clock.Now();
    const bool sleep = !ready() && next > now;
    if (sleep && wait != nullptr && next - now >= kCoarseWait) {
      // Sleeps in the executor's wait (below, unlocked); posts from now on wake it there
      // (WakeLocked). Its deadline is kept early by kCoarseWait: the rest is waited for
      // on the condition variable the next time round.
      in_executor = true;
      sleeping_ = Sleep::kInExecutor;
      waiting_thread_ = std::this_thread::get_id();
      if (next != kTimeInfinite) deadline = clock.ToSteady(next - kCoarseWait);
    } else {
      if (sleep) {
        sleeping_ = Sleep::kOnCondVar;
        sleep_until_ = next;
        if (next == kTimeInfinite) {
          inbox_cv_.Wait(inbox_mu_, ready);
        } else {
          inbox_cv_.WaitUntil(inbox_mu_, clock.ToSteady(next), ready);
        }
        // Another thread may be stepping for this one (BeginInline): it owns the driver
        // until EndInline.
        sleeping_ = Sleep::kAwaitingInline;
        inbox_cv_.Wait(inbox_mu_, [&]() REQUIRES(inbox_mu_) { return !inline_busy_; });
        sleeping_ = Sleep::kAwake;
        sleep_until_ = kTimeInfinite;
        slept_on_cv = true;
      }
      woken_ = false;
    }
  }
  if (wait == nullptr) return;
  if (!in_executor) {
    // Not asleep in the executor's wait: the results it holds already join this step,
    // at most every kPollInterval (a poll of gRPC's queue costs a syscall or two even
    // when empty) — except right after a sleep on the condition variable, when results
    // may have come meanwhile.
    const TimePoint now = clock.Now();
    if (slept_on_cv || now - last_executor_drain_ >= kPollInterval) {
      last_executor_drain_ = now;
      wait->Poll();
    }
    return;
  }
  wait->WaitUntil(deadline);
  last_executor_drain_ = clock.Now();
  MutexLock lock(inbox_mu_);
  sleeping_ = Sleep::kAwake;
  woken_ = false;
}

}  // namespace sloserve
