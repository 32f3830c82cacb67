#pragma once
// One queue of the engine partitioned by model (docs/multi-model.md, "Engine"). Queries of
// different models share a worker (or the shared central queue) but never a batch: each
// model has its own deadline-ordered queue, which is what its batching policy sees. Queues
// exist only for models with queries waiting: a model's queue is taken from a free list
// when its first query arrives and given back once it is empty, so a thousand models on
// dozens of workers cost memory for the queries waiting, not for models x workers. The
// queue whose head is due first (EDF across models) is found by a scan of the non-empty
// queues, which is one queue in a single-model deployment.
//
// Unpartitioned (`by_model` false), every query goes to one queue whatever its model: the
// central queue dispatch policies assign from.
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/query.h"

namespace sloserve {

class ModelQueues {
 public:
  struct Queue {
    TaskId task = kNoId;         // kNoId: unpartitioned (every model)
    std::deque<uint32_t> slots;  // query slots, (deadline, id) order
    // Every insertion since it was last empty went to the back (and, for worker queues,
    // in id order): deadline order is also arrival order (QueueView::arrival_ordered).
    bool arrival_ordered = true;
    // The engine's TryStart round in which this model's policy declined to start a batch
    // (waited, idled, or its decision was refused): the round moves on to the next model.
    uint64_t declined = 0;
  };

  explicit ModelQueues(bool by_model = true) : by_model_(by_model) {}
  // Moving keeps the queues (the first one lives inside the object: pointers to it are
  // re-aimed at the new object; a queue held across a move of its ModelQueues is not).
  ModelQueues(ModelQueues&& other) noexcept { *this = std::move(other); }
  ModelQueues& operator=(ModelQueues&& other) noexcept;
  ModelQueues(const ModelQueues&) = delete;
  ModelQueues& operator=(const ModelQueues&) = delete;

  bool by_model() const { return by_model_; }
  // Queues allocated so far (reused through the free list): the most models that had
  // queries waiting at once, not the number of models seen.
  size_t queues_made() const { return owned_.size() + (inline_used_ ? 1 : 0); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Inserts `slot` in (deadline, id) order into its model's queue (created if needed).
  // The queue stays arrival-ordered while insertions go to the back and, with
  // `check_ids`, in increasing id order. Returns that queue.
  Queue& Insert(uint32_t slot, const std::vector<Query>& table, bool check_ids);
  // Removes the (ascending, distinct, in range) positions of `q`; `removed` receives their
  // slots in that order.
  void Remove(Queue& q, const std::vector<uint32_t>& ascending, std::vector<uint32_t>* removed);
  uint32_t PopFront(Queue& q);
  // The non-empty queue whose head has the earliest (deadline, id), skipping queues that
  // declined in round `round`, when `only` is not kNoId other models' queues, and when
  // `servable` is given (indexed by TaskId) models it marks 0; nullptr when none. Empty
  // queues met on the way go back to the free list.
  Queue* Earliest(const std::vector<Query>& table, TaskId only, uint64_t round,
                  const uint8_t* servable = nullptr) {
    if (active_.size() == 1) {  // one model with a queue: the single-model case
      Queue* q = active_[0];
      return q->slots.empty() || !Eligible(*q, only, round, servable) ? nullptr : q;
    }
    return EarliestOfMany(table, only, round, servable);
  }
  // The model's queue, or nullptr when it has none.
  Queue* Find(TaskId task) {
    const size_t key = by_model_ ? task : 0;
    return key < by_task_.size() ? by_task_[key] : nullptr;
  }
  // The unpartitioned queue (by_model false): every query, (deadline, id) order.
  Queue& All() { return QueueFor(0); }
  // Moves every queued slot into `out` (appended) and leaves no query queued.
  void TakeAll(std::vector<uint32_t>* out);
  // Removes the query with id `id`; true (and its slot) when it was queued.
  bool Erase(QueryId id, const std::vector<Query>& table, uint32_t* slot);
  // Calls f(const Queue&) for each non-empty queue.
  template <class F>
  void ForEach(F&& f) const {
    for (const Queue* q : active_) {
      if (!q->slots.empty()) f(*q);
    }
  }

 private:
  static bool Eligible(const Queue& q, TaskId only, uint64_t round, const uint8_t* servable) {
    return q.declined != round && (only == kNoId || q.task == only) &&
           (servable == nullptr || q.task == kNoId || servable[q.task]);
  }
  Queue* EarliestOfMany(const std::vector<Query>& table, TaskId only, uint64_t round,
                        const uint8_t* servable);
  Queue& QueueFor(TaskId task) {
    const size_t key = by_model_ ? task : 0;
    if (key < by_task_.size() && by_task_[key] != nullptr) return *by_task_[key];
    return NewQueue(key);
  }
  Queue& NewQueue(size_t key);
  void Release(size_t active_index);

  bool by_model_ = true;
  size_t size_ = 0;
  // The first queue lives here, next to the rest of the worker's state (one queue per
  // worker in a single-model deployment: no pointer to chase on every insertion).
  Queue inline_;
  bool inline_used_ = false;
  std::vector<std::unique_ptr<Queue>> owned_;  // every further queue; addresses are stable
  std::vector<Queue*> active_;                 // queues assigned to a model
  std::vector<Queue*> free_;                   // empty queues ready for another model
  std::vector<Queue*> by_task_;                // TaskId -> its queue (nullptr: none)
};

}  // namespace sloserve
