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
  ModelQueues(ModelQueues&&) = default;
  ModelQueues& operator=(ModelQueues&&) = default;

  bool by_model() const { return by_model_; }
  // Queues allocated so far (reused through the free list): the most models that had
  // queries waiting at once, not the number of models seen.
  size_t queues_made() const { return owned_.size(); }
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
                  const uint8_t* servable = nullptr);
  // The model's queue, or nullptr when it has none.
  Queue* Find(TaskId task);
  // The unpartitioned queue (by_model false): every query, (deadline, id) order.
  Queue& All();
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
  Queue& QueueFor(TaskId task);
  void Release(size_t active_index);

  bool by_model_ = true;
  size_t size_ = 0;
  std::vector<std::unique_ptr<Queue>> owned_;  // every queue made; addresses are stable
  std::vector<Queue*> active_;                 // queues assigned to a model
  std::vector<Queue*> free_;                   // empty queues ready for another model
  std::vector<Queue*> by_task_;                // TaskId -> its queue (nullptr: none)
};

}  // namespace sloserve
