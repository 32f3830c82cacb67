// RoutingExecutor: each action reaches the executor of its variant, its ids translated;
// the rest reaches the default executor unchanged; an unmapped hardware type fails.
#include "sloserve/exec/routing_executor.h"

#include <gtest/gtest.h>

#include <vector>

namespace sloserve {
namespace {

// Keeps what it was sent and answers each action at once, OK.
class Recorder : public WorkerExecutor {
 public:
  explicit Recorder(std::vector<WorkerAction>* log) : log_(log) {}
  Duration Send(const WorkerAction& action) override {
    log_->push_back(action);
    ActionResult r;
    r.id = IdOf(action);
    sink_->Post(std::move(r));
    return Duration(0);
  }

 private:
  std::vector<WorkerAction>* log_;
};

class Collect : public ResultSink {
 public:
  void PostAt(ActionResult&& r, TimePoint) override { results.push_back(std::move(r)); }
  void Post(ActionResult r) override { results.push_back(std::move(r)); }
  std::vector<ActionResult> results;
};

TEST(RoutingExecutorTest, ActionsReachTheirVariantsExecutorInItsIds) {
  std::vector<WorkerAction> emulated, real;
  RoutingExecutor routing(std::make_unique<Recorder>(&emulated));
  RoutingExecutor::Route route;
  route.executor = std::make_unique<Recorder>(&real);
  route.variants = {{5, 0}, {6, 1}};
  route.hardware = {{2, 0}};
  ASSERT_TRUE(routing.AddRoute(std::move(route)).ok());
  Collect sink;
  routing.Attach(&sink);

  routing.Send(LoadVariant{.id = 1, .worker = 3, .hardware = 2, .variant = 6});
  routing.Send(RunBatch{.id = 2, .worker = 3, .hardware = 2, .variant = 5});
  routing.Send(RunBatch{.id = 3, .worker = 0, .hardware = 0, .variant = 1});
  routing.Send(UnloadVariant{.id = 4, .worker = 3, .hardware = 2, .variant = 6});

  ASSERT_EQ(real.size(), 3u);
  const auto& load = std::get<LoadVariant>(real[0]);
  EXPECT_EQ(load.variant, 1u);
  EXPECT_EQ(load.hardware, 0u);
  EXPECT_EQ(load.worker, 3u);
  EXPECT_EQ(std::get<RunBatch>(real[1]).variant, 0u);
  EXPECT_EQ(std::get<UnloadVariant>(real[2]).variant, 1u);
  ASSERT_EQ(emulated.size(), 1u);
  EXPECT_EQ(std::get<RunBatch>(emulated[0]).variant, 1u);  // unchanged
  EXPECT_EQ(std::get<RunBatch>(emulated[0]).hardware, 0u);
  EXPECT_EQ(sink.results.size(), 4u);  // every action answered once
}

TEST(RoutingExecutorTest, AVariantOnAnUnmappedTypeFailsAndOneRoutedTwiceIsRefused) {
  std::vector<WorkerAction> emulated, real, other;
  RoutingExecutor routing(std::make_unique<Recorder>(&emulated));
  RoutingExecutor::Route route;
  route.executor = std::make_unique<Recorder>(&real);
  route.variants = {{5, 0}};
  route.hardware = {{2, 0}};
  ASSERT_TRUE(routing.AddRoute(std::move(route)).ok());
  RoutingExecutor::Route again;
  again.executor = std::make_unique<Recorder>(&other);
  again.variants = {{5, 0}};
  EXPECT_FALSE(routing.AddRoute(std::move(again)).ok());
  Collect sink;
  routing.Attach(&sink);
  routing.Send(RunBatch{.id = 7, .worker = 1, .hardware = 1, .variant = 5});
  EXPECT_TRUE(real.empty());
  EXPECT_TRUE(emulated.empty());
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].id, 7u);
  EXPECT_FALSE(sink.results[0].status.ok());
  EXPECT_NE(sink.results[0].status.message().find("not executable on hardware type 1"),
            std::string::npos);
}

}  // namespace
}  // namespace sloserve
