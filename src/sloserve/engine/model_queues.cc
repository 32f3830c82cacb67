#include "sloserve/engine/model_queues.h"

namespace sloserve {

ModelQueues& ModelQueues::operator=(ModelQueues&& other) noexcept {
  if (this == &other) return *this;
  by_model_ = other.by_model_;
  size_ = other.size_;
  inline_ = std::move(other.inline_);
  inline_used_ = other.inline_used_;
  owned_ = std::move(other.owned_);
  active_ = std::move(other.active_);
  free_ = std::move(other.free_);
  by_task_ = std::move(other.by_task_);
  for (std::vector<Queue*>* list : {&active_, &free_, &by_task_}) {
    for (Queue*& q : *list) {
      if (q == &other.inline_) q = &inline_;
    }
  }
  other.size_ = 0;
  other.inline_used_ = false;
  other.active_.clear();
  other.free_.clear();
  other.by_task_.clear();
  return *this;
}

ModelQueues::Queue& ModelQueues::NewQueue(size_t key) {
  if (by_task_.size() <= key) by_task_.resize(key + 1, nullptr);
  Queue* q;
  if (!free_.empty()) {
    q = free_.back();
    free_.pop_back();
  } else if (!inline_used_) {
    inline_used_ = true;
    q = &inline_;
  } else {
    owned_.push_back(std::make_unique<Queue>());
    q = owned_.back().get();
  }
  q->task = by_model_ ? static_cast<TaskId>(key) : kNoId;
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
  ++size_;
  auto before = [&](const Query& prev) {
    return prev.deadline < q.deadline || (prev.deadline == q.deadline && prev.id < q.id);
  };
  if (queue.empty()) {
    mq.arrival_ordered = true;
    queue.push_back(slot);
    return mq;
  }
  // Deadlines mostly arrive in order: the back is the usual place.
  const Query& last = table[queue.back()];
  if (before(last)) {
    // Ids grow with arrival, so back-insertions in id order keep arrival order too.
    if (check_ids && !(last.id < q.id)) mq.arrival_ordered = false;
    queue.push_back(slot);
    return mq;
  }
  auto it = queue.end() - 1;
  while (it != queue.begin() && !before(table[*(it - 1)])) --it;
  queue.insert(it, slot);
  mq.arrival_ordered = false;
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

ModelQueues::Queue* ModelQueues::EarliestOfMany(const std::vector<Query>& table, TaskId only,
                                                uint64_t round, const uint8_t* servable) {
  Queue* best = nullptr;
  for (size_t i = 0; i < active_.size();) {
    Queue* q = active_[i];
    if (q->slots.empty()) {
      // Given back unless it is the last one (a model that keeps emptying and refilling
      // its queue, the single-model case, keeps it).
      if (by_model_ && active_.size() > 1) {
        Release(i);  // the last of active_ moved to i: look at it next
        continue;
      }
      ++i;
      continue;
    }
    ++i;
    if (!Eligible(*q, only, round, servable)) continue;
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
