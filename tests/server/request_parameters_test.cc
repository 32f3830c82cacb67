// Issue 36 item 4: a per-request slo_ms below the fastest achievable latency is refused
// (400 naming it), and unknown request parameters are reported as warnings with a
// did-you-mean, by the streaming parser and the tree parser alike (fast path included:
// it hands anything but slo_ms to the streaming parser).
#include <gtest/gtest.h>

#include <string>

#include "sloserve/server/kserve_handler.h"
#include "sloserve/server/unknown_parameters.h"

namespace sloserve {
namespace {

TaskInfo SloCheckedTask() {
  TaskInfo t;
  t.name = "image";
  t.variants = {"fast", "slow"};
  t.input_name = "input";
  t.input_datatype = "FP32";
  t.input_shape = {-1, 2};
  t.default_slo = Millis(150);
  t.fastest_latency = Micros(9120);
  t.fastest_variant = "fast on cpu";
  return t;
}

std::string ParamsBody(const std::string& params) {
  return R"({"inputs":[{"name":"input","shape":[1,2],"datatype":"FP32","data":[1,2]}])" + params +
         "}";
}

using ParseFn = StatusOr<InferCall> (*)(const TaskInfo&, std::string_view, Duration,
                                        std::string_view);
const ParseFn kBothParsers[] = {&ParseInferRequest, &ParseInferRequestWithTree};

TEST(RequestParametersTest, SloBelowTheFastestAchievableLatencyIsRefused) {
  for (ParseFn parse : kBothParsers) {
    auto low =
        parse(SloCheckedTask(), ParamsBody(R"(,"parameters":{"slo_ms":5})"), Seconds(60), {});
    ASSERT_FALSE(low.ok());
    EXPECT_EQ(low.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(low.status().message().find("below the fastest achievable latency 9.120 ms"),
              std::string::npos)
        << low.status().message();
    EXPECT_NE(low.status().message().find("fast on cpu"), std::string::npos);
    // At the fastest latency and above: accepted.
    auto at =
        parse(SloCheckedTask(), ParamsBody(R"(,"parameters":{"slo_ms":9.12})"), Seconds(60), {});
    ASSERT_TRUE(at.ok()) << at.status().ToString();
    EXPECT_EQ(at->request.slo, Micros(9120));
    // A task without a known fastest latency checks only the range.
    TaskInfo unknown = SloCheckedTask();
    unknown.fastest_latency = Duration::zero();
    EXPECT_TRUE(parse(unknown, ParamsBody(R"(,"parameters":{"slo_ms":5})"), Seconds(60), {}).ok());
  }
}

TEST(RequestParametersTest, UnknownParametersAreWarnedAboutWithADidYouMean) {
  for (ParseFn parse : kBothParsers) {
    auto call = parse(SloCheckedTask(), ParamsBody(R"(,"parameters":{"slo":5,"app":"","zzzz":1})"),
                      Seconds(60), {});
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    ASSERT_EQ(call->warnings.size(), 2u);
    EXPECT_EQ(call->warnings[0], "unknown parameter 'slo' ignored (did you mean 'slo_ms'?)");
    EXPECT_EQ(call->warnings[1],
              "unknown parameter 'zzzz' ignored (known: slo_ms, app, priority, "
              "binary_data_output)");
    // The SLO was not taken from the misspelt key: the task's default applies.
    EXPECT_EQ(call->request.slo, Millis(150));
    auto clean =
        parse(SloCheckedTask(), ParamsBody(R"(,"parameters":{"slo_ms":20})"), Seconds(60), {});
    ASSERT_TRUE(clean.ok());
    EXPECT_TRUE(clean->warnings.empty());
  }
  EXPECT_EQ(UnknownParameterWarning("priorty"),
            "unknown parameter 'priorty' ignored (did you mean 'priority'?)");
  EXPECT_EQ(UnknownParameterWarning("SLO_MS"),
            "unknown parameter 'SLO_MS' ignored (did you mean 'slo_ms'?)");
}

}  // namespace
}  // namespace sloserve
