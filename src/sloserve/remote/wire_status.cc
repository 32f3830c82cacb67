#include "sloserve/remote/wire_status.h"

namespace sloserve::remote {

int32_t ToWireCode(StatusCode code) {
  switch (code) {  // no default: -Wswitch names a StatusCode added without a wire number
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
      return 1;
    case StatusCode::kNotFound:
      return 2;
    case StatusCode::kOutOfRange:
      return 3;
    case StatusCode::kFailedPrecondition:
      return 4;
    case StatusCode::kUnavailable:
      return 5;
    case StatusCode::kResourceExhausted:
      return 6;
    case StatusCode::kInternal:
      return 7;
    case StatusCode::kUnimplemented:
      return 8;
    case StatusCode::kDeadlineExceeded:
      return 9;
  }
  return 7;  // not reached: every StatusCode is listed
}

Status FromWireCode(int32_t code, std::string message) {
  switch (code) {
    case 0:
      return OkStatus();
    case 1:
      return Status(StatusCode::kInvalidArgument, std::move(message));
    case 2:
      return Status(StatusCode::kNotFound, std::move(message));
    case 3:
      return Status(StatusCode::kOutOfRange, std::move(message));
    case 4:
      return Status(StatusCode::kFailedPrecondition, std::move(message));
    case 5:
      return Status(StatusCode::kUnavailable, std::move(message));
    case 6:
      return Status(StatusCode::kResourceExhausted, std::move(message));
    case 7:
      return Status(StatusCode::kInternal, std::move(message));
    case 8:
      return Status(StatusCode::kUnimplemented, std::move(message));
    case 9:
      return Status(StatusCode::kDeadlineExceeded, std::move(message));
    default:
      return InternalError("the worker reported status code " + std::to_string(code) +
                           ", unknown to this controller (a newer worker?): " + message);
  }
}

}  // namespace sloserve::remote
