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

// The scalars of a JSON `data` array converted one at a time, in row-major order, with
// JsonToTensorData's checks and messages (which it is built on): the streaming request
// parser (infer_request_parser.h) feeds each scalar as it is read, so no tree is built.
class JsonTensorDataWriter {
 public:
  // How deep `data` arrays may nest (the outermost is level 1).
  static constexpr int kMaxDepth = 32;
  // `out` receives the elements' bytes and must outlive the writer.
  JsonTensorDataWriter(std::string_view datatype, std::vector<uint8_t>& out);
  // Checks one scalar against the datatype and appends its bytes (an object or array is
  // not a scalar: it is refused as of the wrong datatype).
  Status Append(const nlohmann::json& scalar);
  // The error for an array nested deeper than kMaxDepth.
  static Status NestedTooDeeply();
  int64_t count() const { return count_; }

 private:
  std::string datatype_;
  uint8_t kind_ = 0;  // tensor_codec.cc's ElemType, packed
  uint8_t size_ = 0;
  bool is_signed_ = false;
  std::vector<uint8_t>* out_;
  int64_t count_ = 0;
};

// Validates binary tensor data of `datatype` holding `elements` elements (exact size;
// BYTES: well-formed length prefixes; BOOL: bytes 0 or 1) and copies it into `out`.
Status BinaryToTensorData(std::string_view bytes, std::string_view datatype, int64_t elements,
                          std::vector<uint8_t>& out);

// Takes the first `size` bytes of `binary` (what follows the JSON of a request with
// Inference-Header-Content-Length) as an input's binary data: as BinaryToTensorData, and
// removes them from `binary`; an error names the shortfall.
Status TakeBinaryTensorData(std::string_view& binary, uint64_t size, std::string_view datatype,
                            int64_t elements, std::vector<uint8_t>& out);

// Whether `t.data` holds exactly `elements` elements of `t.datatype` (the check before a
// tensor is rendered, in JSON or as binary data).
bool TensorDataValid(const Tensor& t, int64_t elements);

// Appends `t.data` as the elements of a JSON array (without the brackets); NaN and
// infinities as null. False when the bytes do not hold `elements` elements.
bool AppendTensorDataJson(std::string& out, const Tensor& t, int64_t elements);

}  // namespace sloserve
