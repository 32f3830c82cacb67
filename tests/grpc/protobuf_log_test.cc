// The rate limit libprotobuf's log goes through (protobuf_log.h): at most 5 lines a
// minute, the rest counted and reported with the next line printed.
#include "sloserve/grpc/protobuf_log.h"

#include <gtest/gtest.h>

namespace sloserve::grpc_protocol {
namespace {

using Clock = std::chrono::steady_clock;

TEST(LogRateLimitTest, FiveAMinuteThenTheCountOfTheRest) {
  LogRateLimit limit;
  const Clock::time_point t0 = Clock::now();
  int64_t left_out = -1;
  for (int i = 0; i < kProtobufLogBurst; ++i) {
    EXPECT_TRUE(limit.Admit(t0 + std::chrono::seconds(i), &left_out)) << i;
    EXPECT_EQ(left_out, 0);
  }
  for (int i = 0; i < 1000; ++i)
    EXPECT_FALSE(limit.Admit(t0 + std::chrono::seconds(30), &left_out));
  // A minute after the window opened: printed again, with how many were left out.
  EXPECT_TRUE(limit.Admit(t0 + kProtobufLogWindow, &left_out));
  EXPECT_EQ(left_out, 1000);
  EXPECT_TRUE(limit.Admit(t0 + kProtobufLogWindow, &left_out));
  EXPECT_EQ(left_out, 0);
}

}  // namespace
}  // namespace sloserve::grpc_protocol
