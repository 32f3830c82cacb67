#include "sloserve/server/infer_fast_path.h"

#include <bit>
#include <cfloat>
#include <cmath>

#include "sloserve/core/declared_key.h"

namespace sloserve {
namespace {

// A cursor over the document; every Take* returns false on anything outside the subset
// the fast path reads (the caller then gives up and the tree parser decides).
class FastScanner {
 public:
  explicit FastScanner(std::string_view doc) : p_(doc.data()), end_(doc.data() + doc.size()) {}

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool AtEnd() const { return p_ == end_; }
  bool Take(char c) {
    SkipSpace();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool Peek(char c) {
    SkipSpace();
    return p_ < end_ && *p_ == c;
  }

  // A string of printable ASCII without escapes (the tree parser would decode those and
  // check UTF-8: left to it).
  bool TakeString(std::string_view& out) {
    if (!Take('"')) return false;
    const char* start = p_;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ < 0x20 || *p_ > 0x7e || *p_ == '\\') return false;
      ++p_;
    }
    if (p_ == end_) return false;
    out = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    return true;
  }

  // A JSON number token (RFC 8259 grammar), as text.
  bool TakeNumber(std::string_view& out) {
    SkipSpace();
    const char* start = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (!TakeDigits()) {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!TakeDigits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!TakeDigits()) return false;
    }
    out = std::string_view(start, static_cast<size_t>(p_ - start));
    return true;
  }

  // A non-negative integer small enough that the tree parser reads it as an integer too.
  bool TakeSmallInteger(int64_t& out) {
    std::string_view token;
    if (!TakeNumber(token) || token.empty() || token.size() > 18) return false;
    return ParseIntegerToken(token, out);  // rejects '.', 'e'
  }

  bool TakeDouble(double& out) {
    std::string_view token;
    if (!TakeNumber(token)) return false;
    if (!ParseNumberToken(token, out)) return false;
    // The tree parser reads "-0" as the integer 0: +0.0, not -0.0.
    if (out == 0 && token.find_first_of(".eE") == std::string_view::npos) out = 0.0;
    return true;
  }

  // A flat array of numbers: its text between the brackets (checked number by number
  // when converted).
  bool TakeNumberArrayText(std::string_view& out) {
    if (!Take('[')) return false;
    const char* start = p_;
    while (p_ < end_ && *p_ != ']') {
      const char c = *p_;
      if (c == '[' || c == '{' || c == '"' || c == 't' || c == 'f' || c == 'n') return false;
      ++p_;
    }
    if (p_ == end_) return false;
    out = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    return true;
  }

  // Members of an object whose '{' was taken: calls `member(key)` for each, which reads
  // the value. Empty objects are fine.
  template <typename F>
  bool TakeMembers(F&& member) {
    if (Take('}')) return true;
    do {
      std::string_view key;
      if (!TakeString(key) || !Take(':') || !member(key)) return false;
    } while (Take(','));
    return Take('}');
  }

 private:
  bool TakeDigits() {
    const char* start = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != start;
  }

  const char* p_;
  const char* end_;
};

bool TakeInput(FastScanner& s, CommonInferRequest& r) {
  bool name = false, datatype = false, shape = false, data = false;
  if (!s.Take('{')) return false;
  const bool ok = s.TakeMembers([&](std::string_view key) {
    if (key == "name" && !name) return name = s.TakeString(r.input_name);
    if (key == "datatype" && !datatype) return datatype = s.TakeString(r.datatype);
    if (key == "data" && !data) return data = s.TakeNumberArrayText(r.data);
    if (key == "shape" && !shape) {
      shape = true;
      if (!s.Take('[')) return false;
      if (s.Take(']')) return true;
      do {
        int64_t d = 0;
        if (!s.TakeSmallInteger(d)) return false;
        r.shape.push_back(d);
      } while (s.Take(','));
      return s.Take(']');
    }
    return false;  // another member (parameters, a repeated key, ...): the tree path's
  });
  return ok && name && datatype && shape && data;
}

}  // namespace

std::optional<CommonInferRequest> ScanCommonInferRequest(std::string_view doc) {
  FastScanner s(doc);
  CommonInferRequest r;
  bool inputs = false, parameters = false;
  if (!s.Take('{')) return std::nullopt;
  const bool ok = s.TakeMembers([&](std::string_view key) {
    if (key == "id" && !r.id) {
      std::string_view id;
      if (!s.TakeString(id)) return false;
      r.id = id;
      return true;
    }
    if (key == "inputs" && !inputs) {
      inputs = true;  // exactly one input
      return s.Take('[') && TakeInput(s, r) && s.Take(']');
    }
    if (key == "parameters" && !parameters) {
      parameters = true;
      if (!s.Take('{')) return false;
      return s.TakeMembers([&](std::string_view name) {
        if (name != "slo_ms" || r.slo_ms) return false;
        double ms = 0;
        if (!s.TakeDouble(ms)) return false;
        r.slo_ms = ms;
        return true;
      });
    }
    return false;
  });
  s.SkipSpace();
  if (!ok || !inputs || !s.AtEnd()) return std::nullopt;
  return r;
}

bool AppendFp32Numbers(std::string_view list, int64_t& count, std::vector<uint8_t>& out) {
  count = 0;
  FastScanner s(list);
  s.SkipSpace();
  if (s.AtEnd()) return true;  // []
  do {
    double d = 0;
    if (!s.TakeDouble(d) || std::fabs(d) > FLT_MAX) return false;
    const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(d));
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(bits >> (8 * i)));
    ++count;
  } while (s.Take(','));
  s.SkipSpace();
  return s.AtEnd();
}

}  // namespace sloserve
