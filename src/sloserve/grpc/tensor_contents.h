#pragma once
// Tensor data of the Open Inference Protocol's gRPC messages <-> the element bytes of
// core/payload_store.h's Tensor. Typed `contents` use the repeated field of the
// datatype (INT8/16/32 in int_contents, UINT8/16/32 in uint_contents, ...) and are
// range-checked against the datatype (INT8 128 is refused, not wrapped); raw contents
// are the element bytes themselves and are checked for size (and BOOL for 0/1, BYTES for
// well-formed length prefixes). Errors are InvalidArgument naming the tensor.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"
#include "sloserve/proto/grpc_service.pb.h"

namespace sloserve::grpc_protocol {

// Typed contents of `datatype` with exactly `elements` elements -> element bytes.
StatusOr<std::vector<uint8_t>> BytesFromContents(const inference::InferTensorContents& contents,
                                                 std::string_view datatype, int64_t elements,
                                                 std::string_view tensor);

// Raw bytes of `datatype` checked to hold exactly `elements` elements.
StatusOr<std::vector<uint8_t>> BytesFromRaw(const std::string& raw, std::string_view datatype,
                                            int64_t elements, std::string_view tensor);

// Element bytes of `t` -> typed contents. FP16/BF16 have no typed field: they are widened
// to fp32_contents (the caller answers raw when it can). False when `t.data` does not
// hold whole elements of the datatype.
bool ContentsFromBytes(const Tensor& t, inference::InferTensorContents* contents);

// Elements of a shape (product of its dimensions); -1 when a dimension is negative or the
// product exceeds 2^40.
int64_t ElementCount(const std::vector<int64_t>& shape);

}  // namespace sloserve::grpc_protocol
