// A deferred start (what `sloserve serve` uses): the runtime answers at once while its
// policies initialise on the engine thread, says why it is not ready, and reports a
// failed initialisation instead of serving.
#include <gtest/gtest.h>

#include <future>

#include "sloserve/runtime/engine_runtime.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

RuntimeOptions Deferred(const std::string& variant) {
  RuntimeOptions o;
  o.deployment.workers = 2;
  o.policy.options["variant"] = variant;
  o.deferred_init = true;
  o.log = [](const std::string&) {};
  return o;
}

InferOutcome SubmitAndWait(EngineRuntime& rt) {
  InferRequest req;
  req.task = "t";
  req.slo = Millis(500);
  std::promise<InferOutcome> p;
  auto f = p.get_future();
  rt.Submit(std::move(req), [&](InferOutcome o) { p.set_value(std::move(o)); });
  return f.get();
}

TEST(DeferredStartTest, NotReadyWithAReasonUntilInitialisedThenServes) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Deferred("fast"));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_FALSE((*rt)->Initialized());
  EXPECT_FALSE((*rt)->Ready());
  EXPECT_EQ((*rt)->NotReadyReason().rfind("starting: ", 0), 0u) << (*rt)->NotReadyReason();
  EXPECT_FALSE((*rt)->Tasks().empty());  // metadata is known before the policies are
  EXPECT_EQ((*rt)->PrometheusMetrics(), "");
  InferOutcome early = SubmitAndWait(**rt);  // answered, not queued: 503 with the reason
  EXPECT_EQ(early.status.code(), StatusCode::kUnavailable);
  EXPECT_NE(early.status.message().find("starting"), std::string::npos);

  (*rt)->Start();
  ASSERT_TRUE((*rt)->WaitUntilInitialized().ok());
  EXPECT_TRUE((*rt)->Ready());
  EXPECT_EQ((*rt)->NotReadyReason(), "");
  InferOutcome out = SubmitAndWait(**rt);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.variant, "fast");
  (*rt)->Stop();
  EXPECT_EQ((*rt)->NotReadyReason(), "shutting down");
}

TEST(DeferredStartTest, AFailedInitialisationRefusesRequestsWithTheError) {
  ProfileSuite suite = testing::SmallSuite();
  auto rt = EngineRuntime::Create(&suite, Deferred("no_such_variant"));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();  // the policies' Init has not run yet
  (*rt)->Start();
  Status init = (*rt)->WaitUntilInitialized();
  ASSERT_FALSE(init.ok());
  EXPECT_NE(init.message().find("no_such_variant"), std::string::npos) << init.ToString();
  EXPECT_FALSE((*rt)->Ready());
  EXPECT_EQ((*rt)->NotReadyReason().rfind("failed to start: ", 0), 0u);
  InferOutcome out = SubmitAndWait(**rt);
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status.message().find("no_such_variant"), std::string::npos);
  (*rt)->Stop();
}

TEST(DeferredStartTest, ImmediateInitialisationFailsCreate) {
  ProfileSuite suite = testing::SmallSuite();
  RuntimeOptions o = Deferred("no_such_variant");
  o.deferred_init = false;
  EXPECT_FALSE(EngineRuntime::Create(&suite, o).ok());
}

}  // namespace
}  // namespace sloserve
