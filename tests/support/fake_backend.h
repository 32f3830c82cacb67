#pragma once
// FakeBackend: an InferenceBackend for frontend tests. Completes each request either
// inline from Submit (delay 0) or after `delay` on its own completion thread; can fail
// on demand, report not-ready, and counts what it saw. `done` is invoked exactly once per
// request, also for requests still pending when the backend is destroyed (Unavailable).
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/server/inference_backend.h"

namespace sloserve {

inline TaskInfo FakeImageTask() {
  TaskInfo t;
  t.name = "image";
  t.variants = {"resnet18", "resnet50"};
  t.input_name = "input";
  t.input_datatype = "FP32";
  t.input_shape = {-1, 3};
  t.default_slo = Millis(100);
  t.apps = {};
  return t;
}

class FakeBackend : public InferenceBackend {
 public:
  struct Options {
    std::vector<TaskInfo> tasks = {FakeImageTask()};
    Duration delay{0};  // 0: complete inline from Submit
    bool ready = true;
    std::string hardware;  // reported in every outcome; empty = not reported
  };

  FakeBackend() : FakeBackend(Options{}) {}
  explicit FakeBackend(Options options) : options_(std::move(options)), ready_(options_.ready) {
    if (options_.delay > Duration::zero()) thread_ = std::thread([this] { Loop(); });
  }
  ~FakeBackend() override {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable()) thread_.join();
  }

  std::vector<TaskInfo> Tasks() const override { return options_.tasks; }
  bool Ready() const override { return ready_.load(); }

  void Submit(InferRequest request, std::function<void(InferOutcome)> done) override EXCLUDES(mu_) {
    submitted_.fetch_add(1);
    std::optional<Status> failure;
    {
      MutexLock lock(mu_);
      last_request_ = request;
      ++rows_seen_[request.rows];
      failure = failure_;
    }
    InferOutcome outcome = MakeOutcome(request, failure);
    if (options_.delay == Duration::zero()) {
      Finish(std::move(done), std::move(outcome));
      return;
    }
    {
      MutexLock lock(mu_);
      pending_.emplace(std::chrono::steady_clock::now() + options_.delay,
                       Pending{std::move(done), std::move(outcome)});
    }
    cv_.NotifyAll();
  }

  // Loads and unloads succeed at once; counted (repository_calls()).
  void SetModelLoaded(const std::string& /*task*/, bool /*load*/,
                      std::function<void(Status)> done) override {
    repository_calls_.fetch_add(1);
    done(OkStatus());
  }
  int64_t repository_calls() const { return repository_calls_.load(); }

  void SetReady(bool ready) { ready_.store(ready); }
  // Every later request fails with `status` (until ClearFailure()).
  void FailWith(Status status) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    failure_ = std::move(status);
  }
  void ClearFailure() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    failure_.reset();
  }
  int64_t submitted() const { return submitted_.load(); }
  int64_t completed() const { return completed_.load(); }
  InferRequest last_request() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return last_request_;
  }
  // Requests submitted, by rows (shape[0]).
  std::map<int32_t, int64_t> rows_seen() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return rows_seen_;
  }

 private:
  struct Pending {
    std::function<void(InferOutcome)> done;
    InferOutcome outcome;
  };

  InferOutcome MakeOutcome(const InferRequest& request, const std::optional<Status>& failure) {
    InferOutcome o;
    if (failure) {
      o.status = *failure;
      return o;
    }
    const TaskInfo* task = nullptr;
    for (const auto& t : options_.tasks) {
      if (t.name == request.task) task = &t;
    }
    if (task == nullptr) {
      o.status = NotFoundError("fake backend: unknown task " + request.task);
      return o;
    }
    o.variant = task->variants.empty() ? "default" : task->variants.front();
    o.worker = "w0";
    o.hardware = options_.hardware;
    o.queue_time = Micros(10);
    o.compute_time = options_.delay;
    o.batch_size = request.rows;
    o.met_slo = options_.delay + Micros(10) <= request.slo;
    return o;
  }

  void Finish(std::function<void(InferOutcome)> done, InferOutcome outcome) {
    completed_.fetch_add(1);
    done(std::move(outcome));
  }

  // The completion thread: finishes each pending request when it is due (all of them at
  // once, as Unavailable, when stopping), outside the lock.
  void Loop() EXCLUDES(mu_) {
    while (std::optional<Pending> p = NextDue()) Finish(std::move(p->done), std::move(p->outcome));
  }
  // Waits for the next due request; nullopt once stopping with nothing left.
  std::optional<Pending> NextDue() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (;;) {
      if (pending_.empty()) {
        if (stop_) return std::nullopt;
        cv_.Wait(mu_);
        continue;
      }
      auto it = pending_.begin();
      if (!stop_ && it->first > std::chrono::steady_clock::now()) {
        cv_.WaitUntil(mu_, it->first);
        continue;
      }
      Pending p = std::move(it->second);
      pending_.erase(it);
      if (stop_) p.outcome = InferOutcome{UnavailableError("fake backend: shutting down")};
      return p;
    }
  }

  const Options options_;
  std::atomic<bool> ready_;
  std::atomic<int64_t> submitted_{0};
  std::atomic<int64_t> completed_{0};
  std::atomic<int64_t> repository_calls_{0};
  mutable Mutex mu_;
  CondVar cv_;
  std::multimap<std::chrono::steady_clock::time_point, Pending> pending_ GUARDED_BY(mu_);
  std::optional<Status> failure_ GUARDED_BY(mu_);
  InferRequest last_request_ GUARDED_BY(mu_);
  std::map<int32_t, int64_t> rows_seen_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sloserve
