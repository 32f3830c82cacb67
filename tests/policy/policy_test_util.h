#pragma once
// Builders for policy tests: worker views and queues of hand-made queries.
#include <deque>
#include <vector>

#include "sloserve/policy/views.h"

namespace sloserve::testing {

// `n` active workers, ids 0..n-1, one machine each, no variant resident.
inline std::vector<WorkerView> MakeWorkers(int n, size_t variants = 2) {
  std::vector<WorkerView> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    w[static_cast<size_t>(i)].id = static_cast<WorkerId>(i);
    w[static_cast<size_t>(i)].machine = static_cast<MachineId>(i);
    w[static_cast<size_t>(i)].residency.assign(variants, Residency::kAbsent);
  }
  return w;
}

// One machine per worker of `workers` (ids as the workers' `machine`).
inline std::vector<MachineView> MakeMachines(const std::vector<WorkerView>& workers) {
  std::vector<MachineView> m;
  for (const WorkerView& w : workers) {
    MachineView v;
    v.id = w.machine;
    v.hardware = w.hardware;
    m.push_back(v);
  }
  return m;
}

// A worker first seen after Init (the engine added it with a plan): id `id`, the
// hardware and residency of `like`.
inline WorkerView AddedWorker(const WorkerView& like, WorkerId id) {
  WorkerView w = like;
  w.id = id;
  w.machine = id;
  w.busy = false;
  w.queue_length = 0;
  w.queued_rows = 0;
  w.phase = WorkerPhase::kActive;
  w.active = true;
  return w;
}

// Queries with the given (arrival_ms, slo_ms); ids in order. The queue keeps them in
// (deadline, id) order as the engine does.
struct QueueFixture {
  std::vector<Query> table;
  std::deque<uint32_t> slots;
  void Add(int64_t arrival_ms, int64_t slo_ms, int32_t size = 1) {
    Query q;
    q.id = table.size() + 1;
    q.arrival = kTimeZero + Millis(arrival_ms);
    q.deadline = q.arrival + Millis(slo_ms);
    q.size = size;
    table.push_back(q);
    uint32_t slot = static_cast<uint32_t>(table.size() - 1);
    auto it = slots.begin();
    while (it != slots.end() && (table[*it].deadline < q.deadline ||
                                 (table[*it].deadline == q.deadline && table[*it].id < q.id))) {
      ++it;
    }
    slots.insert(it, slot);
  }
  bool ArrivalOrdered() const {
    for (size_t i = 1; i < slots.size(); ++i) {
      if (table[slots[i]].id < table[slots[i - 1]].id) return false;
    }
    return true;
  }
  QueueView View() const { return QueueView(&slots, &table, ArrivalOrdered()); }
};

}  // namespace sloserve::testing
