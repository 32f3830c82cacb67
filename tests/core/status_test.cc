#include "sloserve/core/status.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(OkStatus().ok());
}

TEST(StatusTest, EachHelperMakesItsCodeAndKeepsTheMessage) {
  struct Case {
    Status status;
    StatusCode code;
    const char* name;
  };
  const std::vector<Case> cases = {
      {InvalidArgumentError("m"), StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
      {NotFoundError("m"), StatusCode::kNotFound, "NOT_FOUND"},
      {OutOfRangeError("m"), StatusCode::kOutOfRange, "OUT_OF_RANGE"},
      {FailedPreconditionError("m"), StatusCode::kFailedPrecondition, "FAILED_PRECONDITION"},
      {UnavailableError("m"), StatusCode::kUnavailable, "UNAVAILABLE"},
      {ResourceExhaustedError("m"), StatusCode::kResourceExhausted, "RESOURCE_EXHAUSTED"},
      {InternalError("m"), StatusCode::kInternal, "INTERNAL"},
      {UnimplementedError("m"), StatusCode::kUnimplemented, "UNIMPLEMENTED"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(c.status.ok());
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.message(), "m");
    EXPECT_STREQ(StatusCodeName(c.code), c.name);
    EXPECT_EQ(c.status.ToString(), std::string(c.name) + ": m");
  }
  EXPECT_STREQ(StatusCodeName(StatusCode::kOk), "OK");
  EXPECT_STREQ(StatusCodeName(StatusCode::kDeadlineExceeded), "DEADLINE_EXCEEDED");
  EXPECT_EQ(Status(StatusCode::kDeadlineExceeded, "late").ToString(), "DEADLINE_EXCEEDED: late");
}

TEST(StatusTest, WithPrefixAddsContextToErrorsOnly) {
  const Status e = NotFoundError("no variant 'x'");
  const Status p = e.WithPrefix("config.yaml:3");
  EXPECT_EQ(p.code(), StatusCode::kNotFound);
  EXPECT_EQ(p.message(), "config.yaml:3: no variant 'x'");
  EXPECT_EQ(e.message(), "no variant 'x'");  // the original is unchanged
  EXPECT_EQ(p.WithPrefix("sim").message(), "sim: config.yaml:3: no variant 'x'");

  const Status ok = OkStatus().WithPrefix("ignored");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(StatusOrTest, HoldsAValue) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), 42);
  EXPECT_EQ(*v, 42);
  *v = 7;
  EXPECT_EQ(v.value(), 7);

  const StatusOr<std::string> s = std::string("abc");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 3u);
  EXPECT_EQ(*s, "abc");
}

TEST(StatusOrTest, HoldsAnError) {
  StatusOr<int> v = OutOfRangeError("too big");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(v.status().message(), "too big");

  const Status e = InvalidArgumentError("bad");
  StatusOr<std::string> s(e);  // from an lvalue Status
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "bad");
}

TEST(StatusOrTest, FromAnOkStatusBecomesAnInternalError) {
  StatusOr<int> moved = OkStatus();
  EXPECT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().code(), StatusCode::kInternal);
  EXPECT_NE(moved.status().message().find("OK Status without a value"), std::string::npos)
      << moved.status().message();

  const Status ok;
  StatusOr<std::string> copied(ok);
  EXPECT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), StatusCode::kInternal);

  // The usual mistake: `return OkStatus();` in a function returning StatusOr<T>.
  auto f = []() -> StatusOr<std::vector<int>> { return OkStatus(); };
  EXPECT_EQ(f().status().code(), StatusCode::kInternal);
}

TEST(StatusOrTest, MoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(5);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(**p, 5);
  EXPECT_EQ(*p.value(), 5);
  std::unique_ptr<int> taken = std::move(p).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 5);

  StatusOr<std::unique_ptr<int>> q = std::make_unique<int>(6);
  std::unique_ptr<int> taken2 = *std::move(q);
  ASSERT_NE(taken2, nullptr);
  EXPECT_EQ(*taken2, 6);

  StatusOr<std::unique_ptr<int>> moved_whole = std::make_unique<int>(8);
  StatusOr<std::unique_ptr<int>> dest = std::move(moved_whole);
  ASSERT_TRUE(dest.ok());
  EXPECT_EQ(**dest, 8);
}

Status FailIf(bool fail, int* calls) {
  ++*calls;
  return fail ? FailedPreconditionError("failed") : OkStatus();
}

Status TwoSteps(bool fail_first, bool fail_second, int* calls, bool* reached_end) {
  RETURN_IF_ERROR(FailIf(fail_first, calls));
  RETURN_IF_ERROR(FailIf(fail_second, calls).WithPrefix("second"));
  *reached_end = true;
  return OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstError) {
  int calls = 0;
  bool end = false;
  EXPECT_TRUE(TwoSteps(false, false, &calls, &end).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(end);

  calls = 0;
  end = false;
  Status s = TwoSteps(true, false, &calls, &end);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "failed");
  EXPECT_EQ(calls, 1);  // the second step never ran
  EXPECT_FALSE(end);

  calls = 0;
  s = TwoSteps(false, true, &calls, &end);
  EXPECT_EQ(s.message(), "second: failed");
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(end);
}

StatusOr<std::unique_ptr<int>> MakeBox(int v) {
  if (v < 0) return InvalidArgumentError("negative: " + std::to_string(v));
  return std::make_unique<int>(v);
}

// Two ASSIGN_OR_RETURNs in one function (distinct temporaries), one into a declaration
// and one into an existing variable, with a move-only value.
StatusOr<int> SumBoxes(int a, int b) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> first, MakeBox(a));
  std::unique_ptr<int> second;
  ASSIGN_OR_RETURN(second, MakeBox(b));
  return *first + *second;
}

TEST(StatusMacrosTest, AssignOrReturnUnwrapsOrPropagates) {
  StatusOr<int> ok = SumBoxes(2, 3);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, 5);

  StatusOr<int> bad_first = SumBoxes(-1, 3);
  EXPECT_EQ(bad_first.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_first.status().message(), "negative: -1");

  StatusOr<int> bad_second = SumBoxes(1, -4);
  EXPECT_EQ(bad_second.status().message(), "negative: -4");
}

// Reading the value of an error StatusOr aborts in every build type (this test runs in the
// Release build, where an assert would be compiled out), naming the status it holds.
using StatusOrDeathTest = ::testing::Test;

TEST_F(StatusOrDeathTest, ValueOfAnErrorAborts) {
  StatusOr<int> v = NotFoundError("no such model 'resnet9'");
  EXPECT_DEATH((void)v.value(),
               "StatusOr::value\\(\\) on a StatusOr holding an error: NOT_FOUND: no such "
               "model 'resnet9'");
  const StatusOr<int>& cv = v;
  EXPECT_DEATH((void)cv.value(), "NOT_FOUND: no such model 'resnet9'");
  EXPECT_DEATH((void)std::move(v).value(), "NOT_FOUND: no such model 'resnet9'");
}

TEST_F(StatusOrDeathTest, DereferenceOfAnErrorAborts) {
  StatusOr<std::string> s = UnavailableError("engine stopped");
  EXPECT_DEATH((void)*s,
               "StatusOr::operator\\* on a StatusOr holding an error: UNAVAILABLE: "
               "engine stopped");
  EXPECT_DEATH((void)s->size(),
               "StatusOr::operator-> on a StatusOr holding an error: "
               "UNAVAILABLE: engine stopped");
  const StatusOr<std::string>& cs = s;
  EXPECT_DEATH((void)cs->size(), "UNAVAILABLE: engine stopped");
  EXPECT_DEATH((void)*std::move(s), "UNAVAILABLE: engine stopped");
}

TEST_F(StatusOrDeathTest, ValueOfAStatusOrBuiltFromOkAborts) {
  StatusOr<std::unique_ptr<int>> p = OkStatus();
  EXPECT_DEATH((void)p.value(), "INTERNAL: StatusOr constructed from an OK Status without a value");
}

}  // namespace
}  // namespace sloserve
