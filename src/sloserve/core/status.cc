#include "sloserve/core/status.h"

#include <cstdio>
#include <cstdlib>

namespace sloserve {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithPrefix(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(code_, prefix + ": " + message_);
}

namespace status_internal {

void DieOnBadStatusOrAccess(const Status& status, const char* what) {
  const std::string held = status.ToString();
  std::fprintf(stderr, "sloserve: fatal: StatusOr::%s on a StatusOr holding an error: %s\n", what,
               held.c_str());
  std::fflush(stderr);
  std::abort();
}

Status OkStatusWithoutValueError() {
  return InternalError("StatusOr constructed from an OK Status without a value");
}

}  // namespace status_internal

}  // namespace sloserve
