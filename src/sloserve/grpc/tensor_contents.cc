#include "sloserve/grpc/tensor_contents.h"
#include "sloserve/core/echo_name.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace sloserve::grpc_protocol {
namespace {

constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

template <class T>
void AppendRaw(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian host (x86-64, aarch64)
  out.insert(out.end(), b, b + sizeof(T));
}

template <class T>
T ReadRaw(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

// The repeated field a datatype's typed contents use, and how many are set.
struct FieldUse {
  const char* name;
  int size;
};

std::vector<FieldUse> SetFields(const inference::InferTensorContents& c) {
  std::vector<FieldUse> set;
  if (c.bool_contents_size()) set.push_back({"bool_contents", c.bool_contents_size()});
  if (c.int_contents_size()) set.push_back({"int_contents", c.int_contents_size()});
  if (c.int64_contents_size()) set.push_back({"int64_contents", c.int64_contents_size()});
  if (c.uint_contents_size()) set.push_back({"uint_contents", c.uint_contents_size()});
  if (c.uint64_contents_size()) set.push_back({"uint64_contents", c.uint64_contents_size()});
  if (c.fp32_contents_size()) set.push_back({"fp32_contents", c.fp32_contents_size()});
  if (c.fp64_contents_size()) set.push_back({"fp64_contents", c.fp64_contents_size()});
  if (c.bytes_contents_size()) set.push_back({"bytes_contents", c.bytes_contents_size()});
  return set;
}

const char* FieldOf(std::string_view dt) {
  if (dt == "BOOL") return "bool_contents";
  if (dt == "INT8" || dt == "INT16" || dt == "INT32") return "int_contents";
  if (dt == "INT64") return "int64_contents";
  if (dt == "UINT8" || dt == "UINT16" || dt == "UINT32") return "uint_contents";
  if (dt == "UINT64") return "uint64_contents";
  if (dt == "FP32") return "fp32_contents";
  if (dt == "FP64") return "fp64_contents";
  if (dt == "BYTES") return "bytes_contents";
  return nullptr;
}

Status OutOfRange(std::string_view tensor, std::string_view dt, int64_t index, long double v) {
  return InvalidArgumentError("input '" + EchoName(tensor) + "': element " + std::to_string(index) +
                              " (" + std::to_string(static_cast<long long>(v)) +
                              ") is out of range for " + std::string(dt));
}

template <class Narrow, class Repeated>
Status AppendChecked(const Repeated& values, std::string_view tensor, std::string_view dt,
                     std::vector<uint8_t>& out) {
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    if (v < std::numeric_limits<Narrow>::min() || v > std::numeric_limits<Narrow>::max())
      return OutOfRange(tensor, dt, i, static_cast<long double>(v));
    AppendRaw(out, static_cast<Narrow>(v));
  }
  return OkStatus();
}

}  // namespace

int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > kMaxTensorElements / d) return -1;
    n *= d;
  }
  return n;
}

StatusOr<std::vector<uint8_t>> BytesFromContents(const inference::InferTensorContents& c,
                                                 std::string_view dt, int64_t elements,
                                                 std::string_view tensor) {
  const std::string name = EchoName(tensor);
  const char* field = FieldOf(dt);
  if (field == nullptr) {
    if (dt == "FP16" || dt == "BF16") {
      return InvalidArgumentError("input '" + name + "': " + std::string(dt) +
                                  " has no typed contents field; send raw_input_contents");
    }
    return InvalidArgumentError("input '" + name + "': unknown datatype '" + EchoName(dt) + "'");
  }
  const std::vector<FieldUse> set = SetFields(c);
  int64_t count = 0;
  for (const FieldUse& f : set) {
    if (std::strcmp(f.name, field) != 0) {
      return InvalidArgumentError("input '" + name + "': contents." + f.name +
                                  " given for datatype " + std::string(dt) + " (expects contents." +
                                  field + ")");
    }
    count = f.size;
  }
  if (count != elements) {
    return InvalidArgumentError("input '" + name + "': contents." + field + " has " +
                                std::to_string(count) + " elements but the shape needs " +
                                std::to_string(elements));
  }
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(elements) * std::max<size_t>(DatatypeSize(dt), 1));
  if (dt == "BOOL") {
    for (bool b : c.bool_contents()) out.push_back(b ? 1 : 0);
  } else if (dt == "INT8") {
    RETURN_IF_ERROR(AppendChecked<int8_t>(c.int_contents(), tensor, dt, out));
  } else if (dt == "INT16") {
    RETURN_IF_ERROR(AppendChecked<int16_t>(c.int_contents(), tensor, dt, out));
  } else if (dt == "INT32") {
    for (int32_t v : c.int_contents()) AppendRaw(out, v);
  } else if (dt == "INT64") {
    for (int64_t v : c.int64_contents()) AppendRaw(out, v);
  } else if (dt == "UINT8") {
    RETURN_IF_ERROR(AppendChecked<uint8_t>(c.uint_contents(), tensor, dt, out));
  } else if (dt == "UINT16") {
    RETURN_IF_ERROR(AppendChecked<uint16_t>(c.uint_contents(), tensor, dt, out));
  } else if (dt == "UINT32") {
    for (uint32_t v : c.uint_contents()) AppendRaw(out, v);
  } else if (dt == "UINT64") {
    for (uint64_t v : c.uint64_contents()) AppendRaw(out, v);
  } else if (dt == "FP32") {
    for (float v : c.fp32_contents()) AppendRaw(out, v);
  } else if (dt == "FP64") {
    for (double v : c.fp64_contents()) AppendRaw(out, v);
  } else {  // BYTES
    for (const std::string& s : c.bytes_contents()) {
      if (s.size() > std::numeric_limits<uint32_t>::max())
        return InvalidArgumentError("input '" + name + "': a BYTES element exceeds 4 GiB");
      AppendRaw(out, static_cast<uint32_t>(s.size()));
      out.insert(out.end(), s.begin(), s.end());
    }
  }
  return out;
}

StatusOr<std::vector<uint8_t>> BytesFromRaw(const std::string& raw, std::string_view dt,
                                            int64_t elements, std::string_view tensor) {
  const std::string name = EchoName(tensor);
  const auto* p = reinterpret_cast<const uint8_t*>(raw.data());
  if (dt == "BYTES") {
    size_t pos = 0;
    int64_t count = 0;
    while (pos < raw.size()) {
      if (raw.size() - pos < 4) {
        return InvalidArgumentError("input '" + name +
                                    "': raw BYTES contents end inside a 4-byte length prefix");
      }
      const uint32_t len = ReadRaw<uint32_t>(p + pos);
      pos += 4;
      if (raw.size() - pos < len) {
        return InvalidArgumentError("input '" + name + "': raw BYTES element " +
                                    std::to_string(count) + " is longer than the contents");
      }
      pos += len;
      ++count;
    }
    if (count != elements) {
      return InvalidArgumentError("input '" + name + "': raw contents hold " +
                                  std::to_string(count) + " BYTES elements but the shape needs " +
                                  std::to_string(elements));
    }
    return std::vector<uint8_t>(p, p + raw.size());
  }
  const size_t size = DatatypeSize(dt);
  if (size == 0) {
    return InvalidArgumentError("input '" + name + "': unknown datatype '" + EchoName(dt) + "'");
  }
  if (raw.size() != static_cast<size_t>(elements) * size) {
    return InvalidArgumentError("input '" + name + "': raw contents have " +
                                std::to_string(raw.size()) + " bytes but shape and " +
                                std::string(dt) + " need " +
                                std::to_string(static_cast<size_t>(elements) * size));
  }
  if (dt == "BOOL") {
    for (size_t i = 0; i < raw.size(); ++i) {
      if (p[i] > 1) {
        return InvalidArgumentError("input '" + name + "': raw BOOL element " + std::to_string(i) +
                                    " is " + std::to_string(p[i]) + " (must be 0 or 1)");
      }
    }
  }
  return std::vector<uint8_t>(p, p + raw.size());
}

bool ContentsFromBytes(const Tensor& t, inference::InferTensorContents* c) {
  const std::string_view dt = t.datatype;
  const uint8_t* p = t.data.data();
  const size_t n = t.data.size();
  if (dt == "BYTES") {
    size_t pos = 0;
    while (pos < n) {
      if (n - pos < 4) return false;
      const uint32_t len = ReadRaw<uint32_t>(p + pos);
      pos += 4;
      if (n - pos < len) return false;
      c->add_bytes_contents(reinterpret_cast<const char*>(p + pos), len);
      pos += len;
    }
    return true;
  }
  const size_t size = DatatypeSize(dt);
  if (size == 0 || n % size != 0) return false;
  for (size_t i = 0; i < n; i += size) {
    const uint8_t* e = p + i;
    if (dt == "BOOL")
      c->add_bool_contents(*e != 0);
    else if (dt == "INT8")
      c->add_int_contents(ReadRaw<int8_t>(e));
    else if (dt == "INT16")
      c->add_int_contents(ReadRaw<int16_t>(e));
    else if (dt == "INT32")
      c->add_int_contents(ReadRaw<int32_t>(e));
    else if (dt == "INT64")
      c->add_int64_contents(ReadRaw<int64_t>(e));
    else if (dt == "UINT8")
      c->add_uint_contents(*e);
    else if (dt == "UINT16")
      c->add_uint_contents(ReadRaw<uint16_t>(e));
    else if (dt == "UINT32")
      c->add_uint_contents(ReadRaw<uint32_t>(e));
    else if (dt == "UINT64")
      c->add_uint64_contents(ReadRaw<uint64_t>(e));
    else if (dt == "FP32")
      c->add_fp32_contents(ReadRaw<float>(e));
    else if (dt == "FP64")
      c->add_fp64_contents(ReadRaw<double>(e));
    else if (dt == "FP16")
      c->add_fp32_contents(HalfToFloat(ReadRaw<uint16_t>(e)));
    else if (dt == "BF16") {
      const uint32_t bits = uint32_t{ReadRaw<uint16_t>(e)} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      c->add_fp32_contents(f);
    } else
      return false;
  }
  return true;
}

}  // namespace sloserve::grpc_protocol
