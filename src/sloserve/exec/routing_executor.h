#pragma once
// Several executors behind one worker protocol: `serve` with emulated models and LibTorch
// models in one pool (models[i].repository, docs/torch.md "In a composed deployment").
// Each action goes to the executor of its variant, its variant and hardware ids translated
// into that executor's suite (a repository's measured profile, whose ids differ from the
// composed suite's); a variant no route names goes to the default executor unchanged.
//
// Ordering (worker_protocol.h) holds per executor. A worker whose variants are split across
// executors has its lifecycle actions ordered within each executor only; the default
// (emulated) one holds no real memory, so a real load never waits on it.
// Children must post their results themselves (ResultSink::Post or PostAt): their
// TakeWait is not asked for.
#include <memory>
#include <unordered_map>
#include <vector>

#include "sloserve/engine/worker_protocol.h"

namespace sloserve {

class RoutingExecutor : public WorkerExecutor {
 public:
  struct Route {
    // What the executor points into (its suite): declared first, destroyed after it.
    std::shared_ptr<const void> keep_alive;
    std::unique_ptr<WorkerExecutor> executor;
    // This suite's ids -> the executor's. A variant of the route on a hardware type the map
    // lacks fails its action (the engine sends a variant only where it is profiled).
    std::unordered_map<VariantId, VariantId> variants;
    std::unordered_map<HardwareId, HardwareId> hardware;
  };

  explicit RoutingExecutor(std::unique_ptr<WorkerExecutor> fallback);
  // Before Attach. A variant another route already names is refused.
  Status AddRoute(Route route);

  void Attach(ResultSink* sink) override;
  void UseClock(const Clock* clock) override;
  Duration Send(const WorkerAction& action) override;
  int vacant_workers() const override;

 private:
  std::unique_ptr<WorkerExecutor> fallback_;
  std::vector<Route> routes_;
  std::unordered_map<VariantId, size_t> route_of_;  // variant -> index into routes_
};

}  // namespace sloserve
