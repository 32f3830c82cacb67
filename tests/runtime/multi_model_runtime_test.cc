// Many models from one pool (issue 31) in EngineRuntime: every model gets its own served
// SLO (per-model SLOs), fastest achievable latency and row limit; an unknown model is
// answered with the closest served name; early shedding works per model, each against its
// own SLO. The suite is testing::MultiModelSuite (image: img_fast 10 ms at batch 1; text:
// txt_only 200 ms + 10 ms per extra row).
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>

#include "sloserve/runtime/engine_runtime.h"
#include "support/multi_model_suite.h"

namespace sloserve {
// Named, not anonymous: runtime_test is one unity batch with other files' helpers.
namespace multi_model_runtime_test {

RuntimeOptions Options(double time_scale) {
  RuntimeOptions o;
  o.deployment.task = "image";
  o.deployment.workers = 2;
  o.policy.options["variant"] = "img_fast";  // text: its one variant
  o.service.time_scale = time_scale;
  return o;
}

InferOutcome SubmitAndWait(EngineRuntime& rt, InferRequest req) {
  std::promise<InferOutcome> p;
  auto f = p.get_future();
  rt.Submit(std::move(req), [&](InferOutcome o) { p.set_value(std::move(o)); });
  return f.get();
}

InferRequest Request(const std::string& model, Duration slo, int32_t rows = 1,
                     int32_t priority = 0) {
  InferRequest req;
  req.task = model;
  req.slo = slo;
  req.rows = rows;
  req.priority = priority;
  return req;
}

const TaskInfo* Find(const std::vector<TaskInfo>& tasks, const std::string& name) {
  for (const TaskInfo& t : tasks)
    if (t.name == name) return &t;
  return nullptr;
}

TEST(MultiModelRuntimeTest, EveryModelHasItsOwnSloFastestLatencyAndRowLimit) {
  const ProfileSuite suite = testing::MultiModelSuite();
  RuntimeOptions o = Options(/*time_scale=*/0.05);
  // text's own SLO: 230 ms holds 4 rows (200 + 10 ms per extra row), its default 400 ms 8.
  o.model_slos = {{"text", Millis(230)}};
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  const std::vector<TaskInfo> tasks = (*rt)->Tasks();
  ASSERT_EQ(tasks.size(), 2u);
  const TaskInfo* image = Find(tasks, "image");
  const TaskInfo* text = Find(tasks, "text");
  ASSERT_TRUE(image != nullptr && text != nullptr);
  EXPECT_EQ(image->default_slo, Millis(100));
  EXPECT_EQ(text->default_slo, Millis(230));
  EXPECT_EQ(image->fastest_latency, Millis(10));
  EXPECT_EQ(image->fastest_variant, "img_fast on hw");
  // Before, only the deployment's task had a fastest latency: text's slo_ms went unchecked.
  EXPECT_EQ(text->fastest_latency, Millis(200));
  EXPECT_EQ(text->fastest_variant, "txt_only on hw");
  EXPECT_EQ(image->max_batch_size, 8);
  EXPECT_EQ(text->max_batch_size, 4);
  const Status below = CheckSloAchievable(Millis(100), *text);
  EXPECT_EQ(below.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(below.message().find("200.000 ms of model 'text' (txt_only on hw at batch 1)"),
            std::string::npos)
      << below.message();

  (*rt)->Start();
  // A request naming no SLO gets its model's: text's 230 ms, not the deployment's 100 ms.
  InferOutcome out = SubmitAndWait(**rt, Request("text", Duration::zero()));
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.variant, "txt_only");
  out = SubmitAndWait(**rt, Request("image", Duration::zero()));
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.variant, "img_fast");
  // Five rows are more than text serves within its 230 ms: a bad request, not queued.
  out = SubmitAndWait(**rt, Request("text", Duration::zero(), 5));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << out.status.ToString();
  EXPECT_NE(out.status.message().find("model 'text' serves at most 4 rows"), std::string::npos)
      << out.status.message();
  // Four rows fit.
  out = SubmitAndWait(**rt, Request("text", Duration::zero(), 4));
  EXPECT_TRUE(out.status.ok()) << out.status.ToString();
  (*rt)->Stop();
}

// A model's own policy (a config's models[i].policy, serve_setup.cc) reaches the engine:
// image answered by img_slow under its own `fixed`, while the pool's says img_fast; a
// policy for a model that is not served is refused at start, naming it.
TEST(MultiModelRuntimeTest, AModelsOwnPolicyChoosesItsVariants) {
  const ProfileSuite suite = testing::MultiModelSuite();
  RuntimeOptions o = Options(/*time_scale=*/0.05);
  PolicySpec own = o.policy;
  own.options["variant"] = "img_slow";
  o.model_policies = {{"image", own}};
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  InferOutcome out = SubmitAndWait(**rt, Request("image", Duration::zero()));
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.variant, "img_slow");
  (*rt)->Stop();

  o.model_policies = {{"imgae", own}};
  auto refused = EngineRuntime::Create(&suite, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("model 'imgae'"), std::string::npos)
      << refused.status().message();
}

TEST(MultiModelRuntimeTest, PerModelSlosAreCheckedAtStart) {
  const ProfileSuite suite = testing::MultiModelSuite();
  RuntimeOptions o = Options(1);
  o.model_slos = {{"text", Millis(150)}};  // below txt_only's 200 ms
  auto impossible = EngineRuntime::Create(&suite, o);
  ASSERT_FALSE(impossible.ok());
  EXPECT_EQ(impossible.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(impossible.status().message().find("impossible SLO 150.000 ms for 'text'"),
            std::string::npos)
      << impossible.status().message();
  o.model_slos = {{"txet", Millis(300)}};
  auto unknown = EngineRuntime::Create(&suite, o);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("did you mean 'text'?"), std::string::npos)
      << unknown.status().message();
}

TEST(MultiModelRuntimeTest, AnUnknownModelIsAnsweredWithTheClosestServedName) {
  const ProfileSuite suite = testing::MultiModelSuite();
  auto rt = EngineRuntime::Create(&suite, Options(0.05));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  const InferOutcome out = SubmitAndWait(**rt, Request("imgae", Millis(100)));
  EXPECT_EQ(out.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(out.status.message(),
            "unknown model 'imgae' (did you mean 'image'? served: image, text)");
  std::promise<Status> unload;
  (*rt)->SetModelLoaded("txt", false, [&](Status s) { unload.set_value(s); });
  const Status s = unload.get_future().get();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("did you mean 'text'?"), std::string::npos) << s.message();
  (*rt)->Stop();
}

// Early shedding per model (runtime/early_shed.h): once admission refuses a level at an
// SLO, a request of any model served at that SLO is refused on the caller's thread; before,
// only the deployment's task was (text's requests always went to the engine thread). As in
// EngineRuntimeTest.OverloadShedsOnTheCallersThreadAndCountsIt, batches run 20x their
// profiled time, so the queue that refuses level 2 takes seconds to drain.
TEST(MultiModelRuntimeTest, EveryModelIsShedEarlyAgainstItsOwnSlo) {
  const ProfileSuite suite = testing::MultiModelSuite();
  RuntimeOptions o = Options(/*time_scale=*/20.0);
  o.deployment.workers = 1;
  o.deployment.slo = Seconds(1);
  o.model_slos = {{"text", Seconds(1)}};
  o.admission.enabled = true;
  o.admission.priority_levels = 2;
  o.inline_steps = false;  // an early refusal is answered on the caller's thread
  auto rt = EngineRuntime::Create(&suite, o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Start();
  std::promise<void> first_shed;
  std::atomic<bool> shed_seen{false};
  std::atomic<int> answered{0};
  constexpr int kBurst = 600;
  for (int i = 0; i < kBurst; ++i) {
    (*rt)->Submit(Request("image", Seconds(1), 1, 1), [&](InferOutcome out) {
      if (out.status.code() == StatusCode::kResourceExhausted && !shed_seen.exchange(true))
        first_shed.set_value();
      answered++;
    });
  }
  first_shed.get_future().wait();
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int kText = 10;
  for (int i = 0; i < kText; ++i) {
    std::thread::id answered_on;
    InferOutcome got;
    (*rt)->Submit(Request("text", Seconds(1), 1, 2), [&](InferOutcome out) {
      answered_on = std::this_thread::get_id();
      got = std::move(out);
      answered++;
    });
    EXPECT_EQ(answered_on, caller) << "text request " << i << " went to the engine";
    EXPECT_EQ(got.status.code(), StatusCode::kResourceExhausted) << got.status.ToString();
  }
  // A longer SLO than its model's: the engine decides.
  std::promise<std::thread::id> long_slo;
  (*rt)->Submit(Request("text", Seconds(60), 1, 2), [&](InferOutcome) {
    long_slo.set_value(std::this_thread::get_id());
    answered++;
  });
  (*rt)->Stop(Duration(0));
  EXPECT_NE(long_slo.get_future().get(), caller);
  EXPECT_EQ(answered.load(), kBurst + kText + 1);
}

}  // namespace multi_model_runtime_test
}  // namespace sloserve
