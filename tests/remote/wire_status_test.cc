// The worker protocol's status codes (src/sloserve/remote/wire_status.h): the numbers are
// pinned (a controller and a worker of different builds must agree on them), every
// StatusCode round-trips, and a number this build does not know is an internal error
// that names it rather than a StatusCode cast from an arbitrary integer.
#include "sloserve/remote/wire_status.h"

#include <gtest/gtest.h>

#include <vector>

namespace sloserve::remote {
namespace {

TEST(WireStatus, NumbersArePinned) {
  const std::vector<std::pair<StatusCode, int32_t>> pinned = {{StatusCode::kOk, 0},
                                                              {StatusCode::kInvalidArgument, 1},
                                                              {StatusCode::kNotFound, 2},
                                                              {StatusCode::kOutOfRange, 3},
                                                              {StatusCode::kFailedPrecondition, 4},
                                                              {StatusCode::kUnavailable, 5},
                                                              {StatusCode::kResourceExhausted, 6},
                                                              {StatusCode::kInternal, 7},
                                                              {StatusCode::kUnimplemented, 8},
                                                              {StatusCode::kDeadlineExceeded, 9}};
  for (const auto& [code, wire] : pinned) {
    EXPECT_EQ(ToWireCode(code), wire) << StatusCodeName(code);
    const Status back = FromWireCode(wire, "why");
    EXPECT_EQ(back.code(), code) << wire;
    if (code != StatusCode::kOk) {
      EXPECT_EQ(back.message(), "why");
    }
  }
}

TEST(WireStatus, UnknownNumbersAreInternalErrorsNamingThem) {
  for (int32_t wire : {10, 42, -1, 2147483647}) {
    const Status s = FromWireCode(wire, "from a newer worker");
    EXPECT_EQ(s.code(), StatusCode::kInternal) << wire;
    EXPECT_NE(s.message().find("status code " + std::to_string(wire)), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("from a newer worker"), std::string::npos);
  }
}

}  // namespace
}  // namespace sloserve::remote
