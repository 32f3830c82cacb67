#include "sloserve/server/tensor_codec.h"

#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "sloserve/server/json_util.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxElements = int64_t{1} << 40;

// How a datatype's elements are checked and stored: BOOL needs booleans, BYTES strings,
// INT*/UINT* integers, FP*/BF16 numbers, anything else a non-null scalar (stored as no
// bytes: there is no KServe v2 layout for it).
enum class ElemKind : uint8_t { kBool, kBytes, kInt, kFp16, kBf16, kFp32, kFp64, kNumber, kOther };
struct ElemType {
  ElemKind kind = ElemKind::kOther;
  uint8_t size = 0;  // bytes per element; 0 = none stored (BYTES: variable)
  bool is_signed = false;
};

ElemType ElemTypeOf(std::string_view dt) {
  const auto size = static_cast<uint8_t>(DatatypeSize(dt));
  if (dt == "BOOL") return {ElemKind::kBool, 1};
  if (dt == "BYTES") return {ElemKind::kBytes, 0};
  // An integer type of no known size ("INT", "INT7") is not stored, like any unknown one.
  if (dt.starts_with("INT") && size != 0) return {ElemKind::kInt, size, true};
  if (dt.starts_with("UINT") && size != 0) return {ElemKind::kInt, size, false};
  if (dt == "FP16") return {ElemKind::kFp16, 2};
  if (dt == "BF16") return {ElemKind::kBf16, 2};
  if (dt == "FP32") return {ElemKind::kFp32, 4};
  if (dt == "FP64") return {ElemKind::kFp64, 8};
  if (dt.starts_with("FP")) return {ElemKind::kNumber, 0};
  return {ElemKind::kOther, 0};
}

// Appends the low `n` bytes of `bits`, little-endian.
inline void AppendLE(std::vector<uint8_t>& out, uint64_t bits, size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    const size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, &bits, n);
  } else {
    for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  }
}

inline uint64_t ReadLE(const uint8_t* p, size_t n) {
  uint64_t bits = 0;
  for (size_t i = 0; i < n; ++i) bits |= static_cast<uint64_t>(p[i]) << (8 * i);
  return bits;
}

// IEEE 754 binary16 from binary32, rounding to nearest even.
uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t mant = x & 0x7fffff;
  const int32_t e = static_cast<int32_t>((x >> 23) & 0xff);
  if (e == 0xff) return sign | 0x7c00 | (mant != 0 ? 0x200 : 0);  // inf, NaN
  const int32_t exp = e - 127 + 15;
  if (exp >= 0x1f) return sign | 0x7c00;  // overflow: inf
  uint32_t half;
  uint32_t rem, mid;
  if (exp <= 0) {  // subnormal or zero
    if (exp < -10) return sign;
    mant |= 0x800000;
    const int shift = 14 - exp;
    half = mant >> shift;
    rem = mant & ((1u << shift) - 1);
    mid = 1u << (shift - 1);
  } else {
    half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    rem = mant & 0x1fff;
    mid = 0x1000;
  }
  if (rem > mid || (rem == mid && (half & 1) != 0)) ++half;  // a carry rounds up to inf
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    const float f = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -f : f;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// bfloat16 from binary32, rounding to nearest even.
uint16_t FloatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

constexpr bool IsInfHalf(uint16_t h) {
  return (h & 0x7fff) == 0x7c00;
}
constexpr bool IsInfBf16(uint16_t h) {
  return (h & 0x7fff) == 0x7f80;
}

// The closed range of an integer datatype of `size` bytes, as text for error messages.
std::string IntRange(ElemType t) {
  const unsigned bits = 8u * t.size;
  if (t.is_signed) {
    const int64_t max =
        bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    return "[" + std::to_string(-max - 1) + ", " + std::to_string(max) + "]";
  }
  const uint64_t max =
      bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  return "[0, " + std::to_string(max) + "]";
}

bool IntInRange(const json& v, ElemType t) {
  const unsigned bits = 8u * t.size;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    const uint64_t max = t.is_signed  ? (uint64_t{1} << (bits - 1)) - 1
                         : bits == 64 ? std::numeric_limits<uint64_t>::max()
                                      : (uint64_t{1} << bits) - 1;
    return u <= max;
  }
  const int64_t s = v.get<int64_t>();
  if (s >= 0) return IntInRange(json(static_cast<uint64_t>(s)), t);
  return t.is_signed && (bits == 64 || s >= -(int64_t{1} << (bits - 1)));
}

enum class Append : uint8_t { kOk, kWrongType, kOutOfRange };

// Checks one scalar against the datatype and appends its bytes.
inline Append AppendElement(const json& v, ElemType t, std::vector<uint8_t>& out) {
  switch (t.kind) {
    case ElemKind::kBool:
      if (!v.is_boolean()) return Append::kWrongType;
      out.push_back(v.get<bool>() ? 1 : 0);
      return Append::kOk;
    case ElemKind::kBytes: {
      if (!v.is_string()) return Append::kWrongType;
      const auto& str = v.get_ref<const std::string&>();
      AppendLE(out, static_cast<uint32_t>(str.size()), 4);
      out.insert(out.end(), str.begin(), str.end());
      return Append::kOk;
    }
    case ElemKind::kInt: {
      if (!v.is_number_integer()) return Append::kWrongType;
      if (!IntInRange(v, t)) return Append::kOutOfRange;
      const uint64_t bits =
          v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
      AppendLE(out, bits, t.size);
      return Append::kOk;
    }
    case ElemKind::kFp16:
    case ElemKind::kBf16:
    case ElemKind::kFp32:
    case ElemKind::kFp64: {
      if (!v.is_number()) return Append::kWrongType;
      const double d = v.get<double>();
      if (!std::isfinite(d)) return Append::kOutOfRange;  // e.g. 1e400 parsed as inf
      if (t.kind == ElemKind::kFp64) {
        AppendLE(out, std::bit_cast<uint64_t>(d), 8);
        return Append::kOk;
      }
      if (std::fabs(d) > FLT_MAX) return Append::kOutOfRange;  // before the cast (UB beyond)
      const auto f = static_cast<float>(d);
      if (t.kind == ElemKind::kFp32) {
        AppendLE(out, std::bit_cast<uint32_t>(f), 4);
        return Append::kOk;
      }
      const uint16_t h = t.kind == ElemKind::kFp16 ? FloatToHalf(f) : FloatToBf16(f);
      if (t.kind == ElemKind::kFp16 ? IsInfHalf(h) : IsInfBf16(h)) return Append::kOutOfRange;
      AppendLE(out, h, 2);
      return Append::kOk;
    }
    case ElemKind::kNumber:
      return v.is_number() ? Append::kOk : Append::kWrongType;
    case ElemKind::kOther:
      return v.is_primitive() && !v.is_null() ? Append::kOk : Append::kWrongType;
  }
  return Append::kWrongType;
}

std::string RangeOf(std::string_view datatype, ElemType t) {
  switch (t.kind) {
    case ElemKind::kInt:
      return IntRange(t);
    case ElemKind::kFp16:
      return "[-65504, 65504]";
    case ElemKind::kBf16:
      return "[-3.3895e38, 3.3895e38]";
    case ElemKind::kFp32:
      return "[-3.4028e38, 3.4028e38]";
    default:
      return "finite values of " + std::string(datatype);
  }
}

// Walks a (possibly nested) data array once: counts its scalars, checks their type and
// range and appends their bytes in row-major order.
Status ConvertElements(const json& data, JsonTensorDataWriter& writer, int depth) {
  if (depth > JsonTensorDataWriter::kMaxDepth) return JsonTensorDataWriter::NestedTooDeeply();
  for (const json& v : data) {
    if (v.is_array()) {
      RETURN_IF_ERROR(ConvertElements(v, writer, depth + 1));
      continue;
    }
    RETURN_IF_ERROR(writer.Append(v));
  }
  return OkStatus();
}

// Appends a number as JSON: the shortest text that reads back as the same value; NaN and
// infinities (which JSON cannot hold) as null.
template <typename T>
void AppendNumber(std::string& out, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) {
      out += "null";
      return;
    }
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

// Whether `p[0, n)` holds exactly `elements` length-prefixed BYTES elements.
bool BytesElementsValid(const uint8_t* p, size_t n, int64_t elements) {
  size_t at = 0;
  for (int64_t i = 0; i < elements; ++i) {
    if (n - at < 4) return false;
    const size_t len = ReadLE(p + at, 4);
    at += 4;
    if (n - at < len) return false;
    at += len;
  }
  return at == n;
}

}  // namespace

StatusOr<int64_t> ElementCount(const std::vector<int64_t>& shape, std::string_view what) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && elements > kMaxElements / d)) {
      return InvalidArgumentError(std::string(what) + " has too many elements");
    }
    elements *= d;
  }
  return elements;
}

JsonTensorDataWriter::JsonTensorDataWriter(std::string_view datatype, std::vector<uint8_t>& out)
    : datatype_(datatype), out_(&out) {
  const ElemType type = ElemTypeOf(datatype);
  kind_ = static_cast<uint8_t>(type.kind);
  size_ = type.size;
  is_signed_ = type.is_signed;
}

Status JsonTensorDataWriter::Append(const json& v) {
  const ElemType type{static_cast<ElemKind>(kind_), size_, is_signed_};
  switch (AppendElement(v, type, *out_)) {
    case Append::kOk:
      ++count_;
      return OkStatus();
    case Append::kWrongType:
      return InvalidArgumentError("'data' element " + std::to_string(count_) +
                                  " is not of datatype " + datatype_);
    case Append::kOutOfRange:
      break;
  }
  return InvalidArgumentError("'data' element " + std::to_string(count_) + " (" + v.dump() +
                              ") is out of the range of " + datatype_ + " " +
                              RangeOf(datatype_, type));
}

Status JsonTensorDataWriter::NestedTooDeeply() {
  return InvalidArgumentError("'data' is nested too deeply");
}

Status JsonToTensorData(const json& data, std::string_view datatype, int64_t& count,
                        std::vector<uint8_t>& out) {
  JsonTensorDataWriter writer(datatype, out);
  const Status status = ConvertElements(data, writer, 1);
  count = writer.count();
  return status;
}

Status BinaryToTensorData(std::string_view bytes, std::string_view datatype, int64_t elements,
                          std::vector<uint8_t>& out) {
  const ElemType type = ElemTypeOf(datatype);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (type.kind == ElemKind::kBytes) {
    if (!BytesElementsValid(p, bytes.size(), elements)) {
      return InvalidArgumentError("binary data of BYTES input is not " + std::to_string(elements) +
                                  " elements of a 4-byte length followed by that many bytes");
    }
  } else if (type.size == 0) {
    return InvalidArgumentError("binary data of datatype " + std::string(datatype) +
                                " is not supported");
  } else if (bytes.size() != static_cast<size_t>(elements) * type.size) {
    return InvalidArgumentError("binary data has " + std::to_string(bytes.size()) + " bytes but " +
                                std::to_string(elements) + " elements of " + std::string(datatype) +
                                " need " +
                                std::to_string(static_cast<size_t>(elements) * type.size));
  } else if (type.kind == ElemKind::kBool) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (p[i] > 1) {
        return InvalidArgumentError("binary BOOL element " + std::to_string(i) + " is " +
                                    std::to_string(p[i]) + " (must be 0 or 1)");
      }
    }
  }
  out.assign(p, p + bytes.size());
  return OkStatus();
}

Status TakeBinaryTensorData(std::string_view& binary, uint64_t size, std::string_view datatype,
                            int64_t elements, std::vector<uint8_t>& out) {
  if (size > binary.size()) {
    return InvalidArgumentError("input 'binary_data_size' is " + std::to_string(size) +
                                " but only " + std::to_string(binary.size()) +
                                " bytes of binary data follow the JSON (Inference-Header-Content-"
                                "Length)");
  }
  RETURN_IF_ERROR(BinaryToTensorData(binary.substr(0, size), datatype, elements, out));
  binary.remove_prefix(size);
  return OkStatus();
}

bool TensorDataValid(const Tensor& t, int64_t elements) {
  const ElemType type = ElemTypeOf(t.datatype);
  if (type.kind == ElemKind::kBytes)
    return BytesElementsValid(t.data.data(), t.data.size(), elements);
  return type.size != 0 && t.data.size() == static_cast<size_t>(elements) * type.size;
}

bool AppendTensorDataJson(std::string& out, const Tensor& t, int64_t elements) {
  if (!TensorDataValid(t, elements)) return false;
  const ElemType type = ElemTypeOf(t.datatype);
  const uint8_t* p = t.data.data();
  if (type.kind == ElemKind::kBytes) {
    size_t at = 0;
    for (int64_t i = 0; i < elements; ++i) {
      const size_t len = ReadLE(p + at, 4);
      at += 4;
      if (i > 0) out += ',';
      AppendJsonString(out, std::string_view(reinterpret_cast<const char*>(p + at), len));
      at += len;
    }
    return true;
  }
  out.reserve(out.size() + t.data.size() * 3);
  for (int64_t i = 0; i < elements; ++i) {
    if (i > 0) out += ',';
    const uint64_t bits = ReadLE(p + i * type.size, type.size);
    switch (type.kind) {
      case ElemKind::kBool:
        out += bits != 0 ? "true" : "false";
        break;
      case ElemKind::kInt:
        if (type.is_signed) {
          const unsigned shift = 64 - 8 * type.size;  // sign-extend
          AppendNumber(out, static_cast<int64_t>(bits << shift) >> shift);
        } else {
          AppendNumber(out, bits);
        }
        break;
      case ElemKind::kFp16:
        AppendNumber(out, HalfToFloat(static_cast<uint16_t>(bits)));
        break;
      case ElemKind::kBf16:
        AppendNumber(out, std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
        break;
      case ElemKind::kFp32:
        AppendNumber(out, std::bit_cast<float>(static_cast<uint32_t>(bits)));
        break;
      case ElemKind::kFp64:
        AppendNumber(out, std::bit_cast<double>(bits));
        break;
      default:
        return false;
    }
  }
  return true;
}

}  // namespace sloserve
