#pragma once
// Policies for engine tests, each a std::function the test writes (well-behaved or not),
// plus a record sink that counts how often each query ended and how.
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "sloserve/engine/query_record.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/policy_spec.h"

namespace sloserve::testing {

class FnBatching : public BatchingPolicy {
 public:
  using Next = std::function<void(const WorkerView&, const QueueView&, TimePoint, BatchDecision*)>;
  using Done = std::function<void(const BatchCompletion&)>;
  explicit FnBatching(Next next, Done done = {}) : next_(std::move(next)), done_(std::move(done)) {}
  void NextBatch(const WorkerView& w, const QueueView& q, TimePoint now,
                 BatchDecision* out) override {
    next_(w, q, now, out);
  }
  void OnBatchComplete(const BatchCompletion& c) override {
    if (done_) done_(c);
  }

 private:
  Next next_;
  Done done_;
};

class FnDispatch : public DispatchPolicy {
 public:
  using AssignFn = std::function<void(const QueueView&, const std::vector<WorkerView>&, TimePoint,
                                      std::vector<Assignment>*)>;
  explicit FnDispatch(AssignFn assign, bool shared = false)
      : assign_(std::move(assign)), shared_(shared) {}
  void Assign(const QueueView& q, const std::vector<WorkerView>& w, TimePoint now,
              std::vector<Assignment>* out) override {
    assign_(q, w, now, out);
  }
  bool shared_queue() const override { return shared_; }

 private:
  AssignFn assign_;
  bool shared_;
};

class FnPlanning : public PlanningPolicy {
 public:
  using Fn = std::function<void(const PlanningInput&, DeploymentPlan*)>;
  // `reads_sizes`: what reads_recent_sizes() answers.
  explicit FnPlanning(Fn fn, bool reads_sizes = true)
      : fn_(std::move(fn)), reads_sizes_(reads_sizes) {}
  void Plan(const PlanningInput& in, DeploymentPlan* out) override { fn_(in, out); }
  bool reads_recent_sizes() const override { return reads_sizes_; }

 private:
  Fn fn_;
  bool reads_sizes_;
};

class FnPlacement : public PlacementPolicy {
 public:
  using Fn = std::function<PlacementDecision(const Query&, const std::vector<WorkerView>&,
                                             const std::vector<MachineView>&, TimePoint)>;
  explicit FnPlacement(Fn fn) : fn_(std::move(fn)) {}
  PlacementDecision Place(const Query& q, const std::vector<WorkerView>& w,
                          const std::vector<MachineView>& m, TimePoint now) override {
    return fn_(q, w, m, now);
  }

 private:
  Fn fn_;
};

// A batching rule: up to `max` queries from the front of the queue, on the variant
// `variant_of(head query)`.
inline FnBatching::Next TakeFront(size_t max, std::function<VariantId(const Query&)> variant_of) {
  return [max, variant_of = std::move(variant_of)](const WorkerView&, const QueueView& q, TimePoint,
                                                   BatchDecision* d) {
    d->Clear();
    if (q.empty()) return;
    d->kind = BatchDecision::Kind::kRun;
    d->variant = variant_of(q.front());
    for (uint32_t i = 0; i < q.size() && i < max; ++i) d->take.push_back(i);
  };
}
inline FnBatching::Next TakeFront(size_t max, VariantId v) {
  return TakeFront(max, [v](const Query&) { return v; });
}

// A dispatch rule: every pending query to worker `to(query, workers)` (kNoId: keep it).
inline FnDispatch::AssignFn Route(
    std::function<WorkerId(const Query&, const std::vector<WorkerView>&)> to) {
  return [to = std::move(to)](const QueueView& q, const std::vector<WorkerView>& w, TimePoint,
                              std::vector<Assignment>* out) {
    for (uint32_t i = 0; i < q.size(); ++i) {
      const WorkerId target = to(q.at(i), w);
      if (target != kNoId) out->push_back({i, target});
    }
  };
}
// Round robin over the active workers.
inline FnDispatch::AssignFn RoundRobinActive() {
  auto next = std::make_shared<size_t>(0);
  return Route([next](const Query&, const std::vector<WorkerView>& w) -> WorkerId {
    for (size_t k = 0; k < w.size(); ++k) {
      const WorkerView& c = w[(*next + k) % w.size()];
      if (c.active) {
        *next = (*next + k + 1) % w.size();
        return c.id;
      }
    }
    return kNoId;
  });
}

inline PolicySet MakeSet(FnDispatch::AssignFn assign, FnBatching::Next next,
                         FnPlanning::Fn plan = {}, FnPlacement::Fn place = {},
                         FnBatching::Done done = {}) {
  PolicySet set;
  set.dispatch = std::make_unique<FnDispatch>(std::move(assign));
  set.batching = std::make_unique<FnBatching>(std::move(next), std::move(done));
  if (plan) set.planning = std::make_unique<FnPlanning>(std::move(plan));
  if (place) set.placement = std::make_unique<FnPlacement>(std::move(place));
  return set;
}

// Every record the engine reports, and how often each query ended.
struct RecordLog {
  std::vector<QueryRecord> records;
  std::map<QueryId, int> ends;
  std::function<void(const QueryRecord&)> Sink() {
    return [this](const QueryRecord& r) {
      records.push_back(r);
      ++ends[r.id];
    };
  }
  const QueryRecord* Find(QueryId id) const {
    for (const QueryRecord& r : records)
      if (r.id == id) return &r;
    return nullptr;
  }
  int64_t Count(DropReason reason) const {
    int64_t n = 0;
    for (const QueryRecord& r : records) n += r.dropped && r.drop_reason == reason ? 1 : 0;
    return n;
  }
  int64_t Completed() const {
    int64_t n = 0;
    for (const QueryRecord& r : records) n += r.dropped ? 0 : 1;
    return n;
  }
  // True when every id in [1, last] ended exactly once and no other id ended.
  bool EachEndedOnce(QueryId last) const {
    if (ends.size() != last) return false;
    for (QueryId id = 1; id <= last; ++id) {
      auto it = ends.find(id);
      if (it == ends.end() || it->second != 1) return false;
    }
    return true;
  }
};

}  // namespace sloserve::testing
