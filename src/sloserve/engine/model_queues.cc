#include "sloserve/engine/model_queues.h"

namespace sloserve {

ModelQueues::Queue& ModelQueues::QueueFor(TaskId task) {
  const size_t key = by_model_ ? task : 0;
  if (key < by_task_.size() && by_task_[key] != nullptr) return *by_task_[key];
  if (by_task_.size() <= key) by_task_.resize(key + 1, nullptr);
  Queue* q;
  if (!free_.empty()) {
    q = free_.back();
    free_.pop_back();
  } else {
    owned_.push_back(std::make_unique<Queue>());
    q = owned_.back().get();
  }
  q->task = by_model_ ? task : kNoId;
  q->arrival_ordered = true;
  q->declined = 0;
  by_task_[key] = q;
  active_.push_back(q);
  return *q;
}

void ModelQueues::Release(size_t i) {
  Queue* q = active_[i];
  by_task_[by_model_ ? q->task : 0] = nullptr;
  active_[i] = active_.back();
  active_.pop_back();
  free_.push_back(q);
}

ModelQueues::Queue& ModelQueues::Insert(uint32_t slot, const std::vector<Query>& table,
                                        bool check_ids) {
  const Query& q = table[slot];
  Queue& mq = QueueFor(q.task);
  std::deque<uint32_t>& queue = mq.slots;
  if (queue.empty()) mq.arrival_ordered = true;
  // Deadlines mostly arrive in order: search from the back.
  auto it = queue.end();
  while (it != queue.begin()) {
    const Query& prev = table[*(it - 1)];
    if (prev.deadline < q.deadline || (prev.deadline == q.deadline && prev.id < q.id)) break;
    --it;
  }
  const bool at_back = it == queue.end();
  // Ids grow with arrival, so back-insertions in id order keep arrival order too.
  const bool id_order = !check_ids || queue.empty() || table[queue.back()].id < q.id;
  queue.insert(it, slot);
  if (!at_back || !id_order) mq.arrival_ordered = false;
  ++size_;
  return mq;
}

void ModelQueues::Remove(Queue& mq, const std::vector<uint32_t>& ascending,
                         std::vector<uint32_t>* removed) {
  removed->clear();
  if (ascending.empty()) return;
  std::deque<uint32_t>& queue = mq.slots;
  size_ -= ascending.size();
  if (ascending.back() + 1 == ascending.size()) {  // the common case: the front of the queue
    for (size_t i = 0; i < ascending.size(); ++i) {
      removed->push_back(queue.front());
      queue.pop_front();
    }
    return;
  }
  for (uint32_t p : ascending) removed->push_back(queue[p]);
  size_t out = 0, next = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    if (next < ascending.size() && ascending[next] == i) {
      ++next;
      continue;
    }
    queue[out++] = queue[i];
  }
  queue.resize(out);
}

uint32_t ModelQueues::PopFront(Queue& mq) {
  const uint32_t slot = mq.slots.front();
  mq.slots.pop_front();
  --size_;
  return slot;
}

ModelQueues::Queue* ModelQueues::Earliest(const std::vector<Query>& table, TaskId only,
                                          uint64_t round, const uint8_t* servable) {
  Queue* best = nullptr;
  for (size_t i = 0; i < active_.size();) {
    Queue* q = active_[i];
    if (q->slots.empty()) {
      if (by_model_) {
        Release(i);  // the last of active_ moved to i: look at it next
        continue;
      }
      ++i;
      continue;
    }
    ++i;
    if (q->declined == round || (only != kNoId && q->task != only)) continue;
    if (servable != nullptr && q->task != kNoId && !servable[q->task]) continue;
    if (best == nullptr) {
      best = q;
      continue;
    }
    const Query& a = table[q->slots.front()];
    const Query& b = table[best->slots.front()];
    if (a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)) best = q;
  }
  return best;
}

ModelQueues::Queue* ModelQueues::Find(TaskId task) {
  const size_t key = by_model_ ? task : 0;
  return key < by_task_.size() ? by_task_[key] : nullptr;
}

ModelQueues::Queue& ModelQueues::All() {
  return QueueFor(0);
}

void ModelQueues::TakeAll(std::vector<uint32_t>* out) {
  for (Queue* q : active_) {
    out->insert(out->end(), q->slots.begin(), q->slots.end());
    q->slots.clear();
    q->arrival_ordered = true;
  }
  size_ = 0;
}

bool ModelQueues::Erase(QueryId id, const std::vector<Query>& table, uint32_t* slot) {
  for (Queue* q : active_) {
    for (size_t i = 0; i < q->slots.size(); ++i) {
      if (table[q->slots[i]].id != id) continue;
      *slot = q->slots[i];
      q->slots.erase(q->slots.begin() + static_cast<std::ptrdiff_t>(i));
      --size_;
      return true;
    }
  }
  return false;
}

}  // namespace sloserve
