#pragma once
// Runs an Engine under the one Driver in virtual time, as `sloserve sim` does: a
// ManualClock jumps to the driver's next due time and Step handles everything due then.
// By default the executor is a ProfileExecutor (results posted for the virtual time they
// end); a test may bring its own (a puppet, a recording wrapper).
//
//   testing::VirtualRun run;
//   ASSERT_TRUE(run.Start(&suite, workers, std::move(policies)).ok());
//   run.Submit(q, kTimeZero + Millis(3));  // handles everything due first, then submits
//   run.RunToEnd();
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sloserve/engine/clock.h"
#include "sloserve/engine/driver.h"
#include "sloserve/engine/engine.h"
#include "sloserve/exec/profile_executor.h"

namespace sloserve::testing {

class VirtualRun {
 public:
  explicit VirtualRun(DriverOptions options = {}) : driver_(options) {}
  VirtualRun(const VirtualRun&) = delete;
  VirtualRun& operator=(const VirtualRun&) = delete;

  // Creates the engine with `executor` (null: a ProfileExecutor over `suite` with the
  // default service-time options and `seed`) and binds it to the driver. The engine's
  // offline jobs go through the driver (EngineOptions::submit_offline is set).
  Status Start(const ProfileSuite* suite, std::vector<WorkerSpec> workers, PolicySet policies,
               WorkerExecutor* executor = nullptr, EngineOptions options = {}, uint64_t seed = 1,
               ServiceTimeOptions service = {}) {
    if (!executor) {
      owned_executor_ = std::make_unique<ProfileExecutor>(ServiceTimeModel(suite, service, seed));
      executor = owned_executor_.get();
    }
    executor_ = executor;
    if (!options.submit_offline) options.submit_offline = driver_.OfflineSubmitter();
    auto engine = Engine::Create(suite, std::move(workers), std::move(policies), executor,
                                 std::move(options), seed);
    if (!engine.ok()) return engine.status();
    engine_ = std::move(engine).value();
    driver_.Bind(engine_.get(), executor);
    return OkStatus();
  }

  Engine& engine() { return *engine_; }
  Driver& driver() { return driver_; }
  ManualClock& clock() { return clock_; }
  TimePoint now() const { return clock_.Now(); }
  // The default executor (null when the test brought its own).
  ProfileExecutor* profile_executor() { return owned_executor_.get(); }

  // Handles everything due at or before `t` in time order, then moves the clock to `t`.
  // Returns the number of items the driver handled.
  int64_t RunUntil(TimePoint t) {
    int64_t handled = 0;
    while (true) {
      const TimePoint next = driver_.NextDue();
      if (next > t) break;
      clock_.Set(std::max(clock_.Now(), next));
      const int64_t n = driver_.Step(clock_.Now());
      handled += n;
      if (n == 0) break;  // nothing it can handle (would spin)
    }
    if (t > clock_.Now() && t != kTimeInfinite) clock_.Set(t);
    return handled;
  }

  // Runs until nothing is due. With a planning policy the plan tick never stops: the run
  // ends once no query, action or offline job is left and no arrival source has more.
  int64_t RunToEnd() {
    int64_t handled = 0;
    while (true) {
      const TimePoint next = driver_.NextDue();
      if (next == kTimeInfinite) break;
      if (engine_->has_planning() && engine_->in_system() == 0 &&
          engine_->actions_in_flight() == 0 && driver_.offline_pending() == 0 &&
          (!arrivals_ || arrivals_->NextArrival() == kTimeInfinite)) {
        break;
      }
      clock_.Set(std::max(clock_.Now(), next));
      const int64_t n = driver_.Step(clock_.Now());
      handled += n;
      if (n == 0) break;  // nothing it can handle (would spin)
    }
    return handled;
  }

  // An arrival at `at` (>= now), through the driver's inbox: everything due until `at` is
  // handled first, and at `at` the driver's order puts results, timers and plan ticks
  // before it. Returns the id the engine gave the query.
  QueryId Submit(Query q, TimePoint at) {
    RunUntil(at);
    QueryId id = 0;
    driver_.PostArrival([&id, q](Engine& e, TimePoint now) { id = e.Submit(q, now); });
    clock_.Set(std::max(clock_.Now(), at));
    driver_.Step(clock_.Now());
    return id;
  }

  void SetArrivals(ArrivalSource* arrivals) {
    arrivals_ = arrivals;
    driver_.SetArrivals(arrivals);
  }

 private:
  ManualClock clock_;
  Driver driver_;
  std::unique_ptr<ProfileExecutor> owned_executor_;
  WorkerExecutor* executor_ = nullptr;
  ArrivalSource* arrivals_ = nullptr;
  // Declared last: destroyed first, before the driver and the executor it points to.
  std::unique_ptr<Engine> engine_;
};

}  // namespace sloserve::testing
