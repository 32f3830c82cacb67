#pragma once
// The actions a `sloserve worker` holds (received, not yet answered), each under an id of
// the worker's own that its executor sees. A caller's action ids are scoped to the
// session it names (RunRequest.session): two controllers, or a hostile client and the
// real controller, cannot collide, and a caller cannot make another's ids "already
// running here" (issue 37 item 3). Bounded: at most `max_pending` actions in all and
// `max_per_session` per session, so a client that never collects its answers cannot grow
// the worker without limit; past a bound an action is refused (RESOURCE_EXHAUSTED).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/status.h"
#include "sloserve/engine/worker_protocol.h"

namespace sloserve::remote {

template <typename Pending>
class ActionRegistry {
 public:
  struct Limits {
    size_t max_pending = 4096;
    size_t max_per_session = 1024;
    size_t max_session_bytes = 128;  // a session id is an opaque token, not a document
  };
  explicit ActionRegistry(Limits limits) : limits_(limits) {}

  // Registers the action `id` of `session`: its local id, or InvalidArgument (session
  // too long), FailedPrecondition (that session's id is pending: a duplicate),
  // ResourceExhausted (a bound is reached) or Unavailable (Close()d: stopping).
  // `pending` is moved from only when it is registered.
  StatusOr<ActionId> Add(const std::string& session, uint64_t id, Pending&& pending) EXCLUDES(mu_) {
    if (session.size() > limits_.max_session_bytes) {
      return InvalidArgumentError("session id of " + std::to_string(session.size()) +
                                  " bytes: the limit is " +
                                  std::to_string(limits_.max_session_bytes));
    }
    MutexLock lock(mu_);
    if (closed_) return UnavailableError("worker is stopping");
    if (by_remote_.count({session, id}) != 0) {
      return FailedPreconditionError("action " + std::to_string(id) +
                                     " of this session is already running here");
    }
    if (by_local_.size() >= limits_.max_pending) {
      return ResourceExhaustedError("worker holds " + std::to_string(by_local_.size()) +
                                    " pending actions (the limit); retry later");
    }
    size_t& mine = per_session_[session];
    if (mine >= limits_.max_per_session) {
      return ResourceExhaustedError("session holds " + std::to_string(mine) +
                                    " pending actions (the limit per session); retry later");
    }
    ++mine;
    const ActionId local = next_++;
    by_remote_.emplace(std::make_pair(session, id), local);
    by_local_.emplace(local, Entry{session, id, std::move(pending)});
    return local;
  }

  // The pending action of local id `local`, removed; nullopt if there is none (answered
  // already, e.g. at Stop()).
  std::optional<Pending> Take(ActionId local) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const auto it = by_local_.find(local);
    if (it == by_local_.end()) return std::nullopt;
    std::optional<Pending> out(std::move(it->second.pending));
    Forget(it);
    return out;
  }

  // Refuses new actions from now on (Add: Unavailable).
  void Close() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    closed_ = true;
  }

  // Waits until nothing is pending or `timeout` has passed; true if nothing is.
  bool WaitEmptyFor(Duration timeout) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return empty_.WaitFor(mu_, timeout, [this]() REQUIRES(mu_) { return by_local_.empty(); });
  }

  // Every pending action, removed (Stop(): answered without their results).
  std::vector<Pending> TakeAll() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<Pending> out;
    out.reserve(by_local_.size());
    for (auto& [local, entry] : by_local_) out.push_back(std::move(entry.pending));
    by_local_.clear();
    by_remote_.clear();
    per_session_.clear();
    empty_.NotifyAll();
    return out;
  }

  size_t size() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return by_local_.size();
  }
  const Limits& limits() const { return limits_; }

 private:
  struct Entry {
    std::string session;
    uint64_t id;
    Pending pending;
  };
  using LocalMap = std::unordered_map<ActionId, Entry>;

  void Forget(typename LocalMap::iterator it) REQUIRES(mu_) {
    by_remote_.erase({it->second.session, it->second.id});
    const auto s = per_session_.find(it->second.session);
    if (s != per_session_.end() && --s->second == 0) per_session_.erase(s);
    by_local_.erase(it);
    if (by_local_.empty()) empty_.NotifyAll();
  }

  const Limits limits_;
  mutable Mutex mu_;
  CondVar empty_;
  bool closed_ GUARDED_BY(mu_) = false;
  ActionId next_ GUARDED_BY(mu_) = 1;
  LocalMap by_local_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, uint64_t>, ActionId> by_remote_ GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> per_session_ GUARDED_BY(mu_);
};

}  // namespace sloserve::remote
