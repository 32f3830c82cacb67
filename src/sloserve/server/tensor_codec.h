#pragma once
// Conversion between the KServe v2 encodings of a tensor's elements and Tensor::data
// (core/payload_store.h): JSON `data` arrays, and Triton's binary tensor data extension,
// whose layout is Tensor::data's own (little-endian elements; BYTES as 4-byte length +
// bytes), so binary input is validated and copied, and binary output is the bytes as
// they are. Values outside the datatype's range are refused, never wrapped or rounded to
// infinity. Used by the HTTP handler; transport independent.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/core/status.h"

namespace sloserve {

// The number of elements of `shape` (each dimension >= 0); InvalidArgument naming
// `what` when it does not fit in 2^40.
StatusOr<int64_t> ElementCount(const std::vector<int64_t>& shape, std::string_view what);

// Checks every scalar of the (possibly nested) JSON `data` array against `datatype`
// (BOOL booleans, BYTES strings, INT*/UINT* integers, FP*/BF16 numbers, each within the
// datatype's range) and appends their bytes to `out` in row-major order. `count` receives
// the number of scalars. InvalidArgument names the element, its value and the range.
Status JsonToTensorData(const nlohmann::json& data, std::string_view datatype, int64_t& count,
                        std::vector<uint8_t>& out);

// Validates binary tensor data of `datatype` holding `elements` elements (exact size;
// BYTES: well-formed length prefixes; BOOL: bytes 0 or 1) and copies it into `out`.
Status BinaryToTensorData(std::string_view bytes, std::string_view datatype, int64_t elements,
                          std::vector<uint8_t>& out);

// Whether `t.data` holds exactly `elements` elements of `t.datatype` (the check before a
// tensor is rendered, in JSON or as binary data).
bool TensorDataValid(const Tensor& t, int64_t elements);

// Appends `t.data` as the elements of a JSON array (without the brackets); NaN and
// infinities as null. False when the bytes do not hold `elements` elements.
bool AppendTensorDataJson(std::string& out, const Tensor& t, int64_t elements);

}  // namespace sloserve
