#include "sloserve/remote/worker_health.h"

#include <pthread.h>

#include <cstdio>

namespace sloserve::remote {

WorkerHealth::WorkerHealth(std::vector<std::string> names, WorkerHealthOptions options,
                           CheckRound check, CancelCalls cancel)
    : options_(std::move(options)),
      check_(std::move(check)),
      cancel_(std::move(cancel)),
      failed_checks_(names.size(), 0),
      names_(std::move(names)),
      up_(failed_checks_.size(), !options_.start_down) {}

void WorkerHealth::Attach(ResultSink* sink) {
  MutexLock lock(mu_);
  sink_ = sink;
  for (WorkerId w = 0; w < up_.size(); ++w) {
    if (!up_[w]) sink_->PostReachability(w, false);
  }
}

void WorkerHealth::Rename(WorkerId w, std::string name) {
  MutexLock lock(mu_);
  names_[w] = std::move(name);
}

WorkerHealth::~WorkerHealth() {
  Stop();
}

void WorkerHealth::Start() {
  thread_ = std::thread([this] {
    // Named apart from the engine thread it is started from (per-thread counts, perf).
    pthread_setname_np(pthread_self(), "worker-health");
    Loop();
  });
}

void WorkerHealth::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

bool WorkerHealth::Up(WorkerId w) const {
  MutexLock lock(mu_);
  return up_[w];
}

int WorkerHealth::down_workers() const {
  MutexLock lock(mu_);
  int n = 0;
  for (bool up : up_) n += up ? 0 : 1;
  return n;
}

void WorkerHealth::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

// The state change and its post happen under mu_, so the engine sees the transitions in
// the order they happened (a down posted after a later up would keep the worker out for
// good: the checks that succeed find it up already).
bool WorkerHealth::MarkDown(WorkerId w, const std::string& why, bool cancel) {
  std::string name;
  {
    MutexLock lock(mu_);
    if (!up_[w]) return false;
    up_[w] = false;
    sink_->PostReachability(w, false);
    name = names_[w];
  }
  if (!cancel) {
    Log("sloserve: " + name + " is down: " + why);
    return true;
  }
  const size_t cancelled = cancel_(w);
  Log("sloserve: " + name + " is down: " + why + "; " + std::to_string(cancelled) +
      " action(s) failed");
  return true;
}

void WorkerHealth::PostLost(WorkerId w, ActionResult result) {
  // With the current state: a worker back up since its call failed stays up.
  MutexLock lock(mu_);
  sink_->PostReachability(w, up_[w], std::move(result));
}

void WorkerHealth::MarkUp(WorkerId w) {
  std::string name;
  {
    MutexLock lock(mu_);
    if (up_[w] || stopping_) return;
    up_[w] = true;
    sink_->PostReachability(w, true);
    name = names_[w];
  }
  Log("sloserve: " + name + " is healthy again: rejoins");
}

void WorkerHealth::Loop() {
  for (;;) {
    {
      MutexLock lock(mu_);
      cv_.WaitFor(mu_, options_.interval, [this]() REQUIRES(mu_) { return stopping_; });
      if (stopping_) return;
    }
    if (options_.before_round) options_.before_round();
    const std::vector<Status> round = check_(options_.timeout);
    for (WorkerId w = 0; w < failed_checks_.size(); ++w) {
      const Status s = w < round.size() ? round[w] : InternalError("not checked");
      if (s.ok()) {
        failed_checks_[w] = 0;
        MarkUp(w);
      } else if (++failed_checks_[w] >= options_.failures_to_down) {
        MarkDown(w, "health check failed " + std::to_string(failed_checks_[w]) + " times (" +
                        s.message() + ")");
      }
    }
  }
}

}  // namespace sloserve::remote
