#pragma once
// The order a `sloserve worker` runs a session's lifecycle actions (Load/Unload) in: the
// controller numbers them per worker, 1, 2, 3, ... in the order the engine sent them
// (LifecycleRequest.sequence), and number n starts only once number n-1 has ended, however
// the worker's gRPC threads received them (issue 33 item 3: the engine counts an Unload's
// memory free when it sends it, so a later Load must not overtake it). An action that
// comes early waits for its predecessors; one whose predecessor never comes (its call
// was lost before reaching the worker, e.g. across a reconnect) waits at most `gap_wait`,
// after which the missing numbers are skipped explicitly (a lost action never ran here,
// so nothing is overtaken) and one of them arriving later is refused as out of order.
// Sequence 0 means unordered (a caller that does not number its actions).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sloserve/core/mutex.h"
#include "sloserve/core/status.h"

namespace sloserve::remote {

template <typename Item>
class LifecycleOrder {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LifecycleOrder(Clock::duration gap_wait) : gap_wait_(gap_wait) {}

  // Item `sequence` of `session` arrived: the items that may start now (it, if it is next
  // and nothing of the session is running), or an error for a number already passed
  // (FailedPrecondition). Held items start from Done() or Expire().
  StatusOr<std::vector<Item>> Arrive(const std::string& session, uint64_t sequence, Item item)
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    Session& s = sessions_[session];
    if (sequence < s.next || (sequence == s.next && s.running) || s.held.count(sequence) != 0) {
      return FailedPreconditionError("lifecycle action " + std::to_string(sequence) +
                                     " is out of order: this session is at " +
                                     std::to_string(s.next));
    }
    s.held.emplace(sequence, Held{Clock::now(), std::move(item)});
    return Ready(s);
  }

  // The running item of `session` ended: the next one, if it is here.
  std::vector<Item> Done(const std::string& session) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return {};
    it->second.running = false;
    ++it->second.next;
    return Ready(it->second);
  }

  // Items held past gap_wait: their missing predecessors are skipped and the first of
  // them starts (where nothing of its session runs). Also says how the skips went.
  std::vector<Item> Expire(std::vector<std::string>* skipped) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<Item> out;
    const Clock::time_point now = Clock::now();
    for (auto& [name, s] : sessions_) {
      if (s.running || s.held.empty()) continue;
      auto first = s.held.begin();
      if (first->first == s.next || now - first->second.since < gap_wait_) continue;
      if (skipped != nullptr) {
        skipped->push_back("session " + name.substr(0, 32) + ": lifecycle actions " +
                           std::to_string(s.next) + ".." + std::to_string(first->first - 1) +
                           " never came; skipped");
      }
      s.next = first->first;
      for (Item& item : Ready(s)) out.push_back(std::move(item));
    }
    return out;
  }

  // Whether items are held (the caller then calls Expire every so often).
  bool AnyHeld() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (const auto& [name, s] : sessions_) {
      if (!s.held.empty()) return true;
    }
    return false;
  }

  // Every held item, removed (Stop()).
  std::vector<Item> TakeAll() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<Item> out;
    for (auto& [name, s] : sessions_) {
      for (auto& [seq, held] : s.held) out.push_back(std::move(held.item));
      s.held.clear();
    }
    return out;
  }

 private:
  struct Held {
    Clock::time_point since;
    Item item;
  };
  struct Session {
    uint64_t next = 1;     // the number that starts next
    bool running = false;  // number next is running
    std::map<uint64_t, Held> held;
  };

  // The next item, if it is here and nothing runs.
  std::vector<Item> Ready(Session& s) REQUIRES(mu_) {
    std::vector<Item> out;
    if (s.running) return out;
    const auto it = s.held.find(s.next);
    if (it == s.held.end()) return out;
    out.push_back(std::move(it->second.item));
    s.held.erase(it);
    s.running = true;
    return out;
  }

  const Clock::duration gap_wait_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Session> sessions_ GUARDED_BY(mu_);
};

}  // namespace sloserve::remote
