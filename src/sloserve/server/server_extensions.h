#pragma once
// The protocol extensions ServerMetadata advertises (GET /v2 and gRPC ServerMetadata;
// docs/protocol.md, docs/grpc.md): one list, so REST and gRPC cannot drift apart.
// `schedule_policy` is Triton's name for the per-request `priority` parameter
// (docs/admission.md "Priority classes").
#include <array>
#include <string_view>

namespace sloserve {

inline constexpr std::array<std::string_view, 5> kServerExtensions = {
    "parameters", "schedule_policy", "statistics", "model_repository", "sloserve_slo"};
// Binary tensor data is HTTP framing (Inference-Header-Content-Length); gRPC carries raw
// bytes natively in raw_input_contents, so only REST lists it.
inline constexpr std::string_view kRestOnlyExtension = "binary_tensor_data";

}  // namespace sloserve
