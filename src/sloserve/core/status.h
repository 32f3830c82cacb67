#pragma once
// One error type for all of sloserve: Status / StatusOr<T>. Exceptions only at process
// edges (apps/). Messages name the problem and where it is (file, line, field).
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sloserve {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kOutOfRange,
  kFailedPrecondition,
  kUnavailable,
  kResourceExhausted,
  kInternal,
  kUnimplemented,
  kDeadlineExceeded,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;
  // Returns a copy whose message is "<prefix>: <message>" (adds context while propagating).
  Status WithPrefix(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() {
  return Status();
}
inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status OutOfRangeError(std::string m) {
  return {StatusCode::kOutOfRange, std::move(m)};
}
inline Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status UnavailableError(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status InternalError(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}
inline Status UnimplementedError(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}

namespace status_internal {
// Cold paths of StatusOr, out of line in status.cc so the accessors stay a compare and a
// branch. Prints "<what> on a StatusOr holding <status>" to stderr and aborts, in every
// build type (an assert would vanish under NDEBUG and Release would read an empty value).
[[noreturn, gnu::cold, gnu::noinline]] void DieOnBadStatusOrAccess(const Status& status,
                                                                   const char* what);
// The status a StatusOr built from an OK Status holds instead (see StatusOr).
[[gnu::cold, gnu::noinline]] Status OkStatusWithoutValueError();
}  // namespace status_internal

// A T or the non-OK Status saying why there is none.
//
// Reading the value (value(), *, ->) of an error StatusOr aborts with the held status on
// stderr, in every build type: it is a bug in the caller, who must test ok() first.
//
// Built from an OK Status (e.g. `return OkStatus();` in a function returning StatusOr<T>),
// it holds an INTERNAL error instead, never "OK without a value". An error rather than an
// abort because it is an ordinary value flowing back to a caller that already handles
// errors: a server reports it on that one request and keeps serving, a CLI prints it and
// exits non-zero, and a caller that ignores ok() still aborts on the first value() access
// with that status named. ok() therefore always means "holds a value".
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT
    if (status_.ok()) [[unlikely]]
      status_ = status_internal::OkStatusWithoutValueError();
  }
  StatusOr(Status&& status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) [[unlikely]]
      status_ = status_internal::OkStatusWithoutValueError();
  }
  StatusOr(const T& value) : value_(value) {}        // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    CheckHasValue("value()");
    return *value_;
  }
  const T& value() const& {
    CheckHasValue("value()");
    return *value_;
  }
  T&& value() && {
    CheckHasValue("value()");
    return std::move(*value_);
  }
  T& operator*() & {
    CheckHasValue("operator*");
    return *value_;
  }
  const T& operator*() const& {
    CheckHasValue("operator*");
    return *value_;
  }
  T&& operator*() && {
    CheckHasValue("operator*");
    return std::move(*value_);
  }
  T* operator->() {
    CheckHasValue("operator->");
    return &*value_;
  }
  const T* operator->() const {
    CheckHasValue("operator->");
    return &*value_;
  }

 private:
  void CheckHasValue(const char* what) const {
    if (!value_.has_value()) [[unlikely]]
      status_internal::DieOnBadStatusOrAccess(status_, what);
  }

  Status status_;  // OK exactly when value_ holds a value
  std::optional<T> value_;
};

#define SLOSERVE_CONCAT_INNER(a, b) a##b
#define SLOSERVE_CONCAT(a, b) SLOSERVE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)        \
  do {                               \
    ::sloserve::Status _st = (expr); \
    if (!_st.ok()) return _st;       \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SLOSERVE_CONCAT(_statusor_, __LINE__), lhs, expr)

}  // namespace sloserve
