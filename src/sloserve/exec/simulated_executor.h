#pragma once
// The simulator's executor: computes each batch's duration from the service-time model
// and keeps the pending completions in virtual time. The simulation driver pops them
// in time order and hands them to the engine.
#include <queue>
#include <vector>

#include "sloserve/exec/service_time_model.h"

namespace sloserve {

struct Completion {
  TimePoint at;
  uint64_t seq;  // launch order: deterministic tie-break
  WorkerId worker;
  BatchId batch;
  bool operator>(const Completion& o) const { return at > o.at || (at == o.at && seq > o.seq); }
};

class SimulatedExecutor : public ExecutorPort {
 public:
  explicit SimulatedExecutor(ServiceTimeModel model) : model_(std::move(model)) {}
  Duration Launch(const BatchLaunch& launch) override;

  bool HasPending() const { return !pending_.empty(); }
  TimePoint NextCompletion() const { return pending_.empty() ? kTimeInfinite : pending_.top().at; }
  Completion PopCompletion();

 private:
  ServiceTimeModel model_;
  uint64_t seq_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> pending_;
};

}  // namespace sloserve
