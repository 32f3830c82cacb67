#pragma once
// The status code a `sloserve worker` reports in ActionReply.code
// (proto/worker_service.proto), mapped explicitly both ways. The numbers are a protocol
// constant shared by controllers and workers of different builds, so they are written
// out here rather than taken from StatusCode's order: reordering or extending StatusCode
// cannot change what a number means on the wire (tests/grpc/wire_status_test.cc pins
// them). A number this build does not know becomes an internal error naming it.
#include <cstdint>
#include <string>

#include "sloserve/core/status.h"

namespace sloserve::remote {

int32_t ToWireCode(StatusCode code);
// OK for 0; the status for a known code; kInternal naming the code for any other.
Status FromWireCode(int32_t code, std::string message);

}  // namespace sloserve::remote
