// ParseProfileText: one pass over the lines of a profile suite (docs/profiles.md). Every
// error is one line: "<origin>:<line>: <record>: field '<field>': <what is wrong>".
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "sloserve/core/declared_key.h"
#include "sloserve/profile/profile.h"
#include "sloserve/profile/profile_format.h"

namespace sloserve {
namespace {

constexpr std::string_view kDatatypes[] = {"BOOL", "UINT8", "UINT16", "UINT32", "UINT64",
                                           "INT8", "INT16", "INT32",  "INT64",  "FP16",
                                           "FP32", "FP64",  "BF16",   "BYTES"};

// Names the sample-list key of a latency/load record.
using SampleKey = std::tuple<HardwareId, VariantId, int>;

class Parser {
 public:
  explicit Parser(const std::string& origin) : origin_(origin) {}

  StatusOr<ProfileSuite> Parse(std::string_view text);

 private:
  Status ParseLine(std::string_view line);
  Status ParseTask();
  Status ParseHardware();
  Status ParseVariant();
  Status ParseSamples(bool is_load);
  Status ParseExecHist();
  Status ParseCapacity();
  Status ParseModelHash();
  Status FlushGroup();

  // Checks the field count: exactly `n` fields after the keyword, or at least `n` when
  // `variadic` (the last named field repeats).
  Status ExpectFields(std::initializer_list<const char*> names, bool variadic);
  Status Error(const std::string& field, const std::string& what) const;
  Status ErrorAt(int line, std::string_view record, const std::string& field,
                 const std::string& what) const;
  StatusOr<int64_t> Int(size_t i, const char* field, int64_t min) const;
  StatusOr<double> Number(size_t i, const char* field, double min, double max) const;
  StatusOr<std::string> Datatype(size_t i, const char* field) const;        // a KServe v2 type
  StatusOr<std::vector<int64_t>> Shape(size_t i, const char* field) const;  // "-1,3,224
  StatusOr<std::string> NewName(size_t i, const char* field,
                                const std::unordered_map<std::string, uint32_t>& names) const;
  StatusOr<uint32_t> Ref(size_t i, const char* field, const char* what,
                         const std::unordered_map<std::string, uint32_t>& names) const;

  const std::string& origin_;
  ProfileSuite suite_;
  int line_no_ = 0;
  std::string_view record_;
  std::vector<std::string_view> tok_;  // tok_[0] is the keyword
  std::string_view rest_;              // the line after the keyword (provenance)
  bool have_header_ = false, have_suite_ = false, have_provenance_ = false;
  std::unordered_map<std::string, uint32_t> tasks_, hardware_, variants_;

  // Adjacent latency (or load) lines with the same key form one sample list.
  struct Group {
    bool active = false;
    bool is_load = false;
    SampleKey key;
    int line = 0;
    std::vector<int64_t> samples;
    size_t last_size = 0;
  } group_;
  std::map<SampleKey, std::pair<int, size_t>> latency_seen_;  // key -> (line, sample count)
  std::map<SampleKey, int> load_seen_;
};

std::string Quote(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string FormatBound(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

StatusOr<ProfileSuite> Parser::Parse(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no_;
    RETURN_IF_ERROR(ParseLine(text.substr(pos, end - pos)));
    pos = end + 1;
  }
  RETURN_IF_ERROR(FlushGroup());
  ++line_no_;  // errors about what is missing point past the last line
  record_ = {};
  if (!have_header_) return Error("", "empty profile: no 'sloserve-profile 1' header");
  if (!have_suite_) return Error("suite", "missing 'suite <name>' record");
  if (!have_provenance_) return Error("provenance", "missing 'provenance <text>' record");
  return std::move(suite_);
}

Status Parser::ParseLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  tok_.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (tok_.empty()) {
      if (line[i] == '#') return OkStatus();  // comment line
      rest_ = line.substr(j);
      while (!rest_.empty() && (rest_.front() == ' ' || rest_.front() == '\t')) {
        rest_.remove_prefix(1);
      }
    }
    tok_.push_back(line.substr(i, j - i));
    i = j;
  }
  if (tok_.empty()) return OkStatus();
  record_ = tok_[0];

  const bool is_samples = record_ == "latency" || record_ == "load";
  if (!is_samples) RETURN_IF_ERROR(FlushGroup());
  if (!have_header_) {
    if (record_ != profile_format::kMagic) {
      // Not a profile: nothing of it is quoted (a path such as /proc/self/environ would
      // print the environment).
      return ErrorAt(line_no_, "", "",
                     std::string("not a profile suite: expected '") + profile_format::kMagic +
                         " 1' as the first record");
    }
    RETURN_IF_ERROR(ExpectFields({"version"}, false));
    ASSIGN_OR_RETURN(int64_t version, Int(1, "version", 0));
    if (version != profile_format::kVersion) {
      return Error("version", "unsupported format version " + std::to_string(version) +
                                  " (this build reads 1)");
    }
    have_header_ = true;
    return OkStatus();
  }
  if (is_samples) return ParseSamples(record_ == "load");
  if (record_ == "task") return ParseTask();
  if (record_ == "hardware") return ParseHardware();
  if (record_ == "variant") return ParseVariant();
  if (record_ == "capacity") return ParseCapacity();
  if (record_ == "exec_hist") return ParseExecHist();
  if (record_ == "model_hash") return ParseModelHash();
  if (record_ == "suite") {
    if (have_suite_) return Error("name", "duplicate 'suite' record");
    RETURN_IF_ERROR(ExpectFields({"name"}, false));
    suite_.set_name(std::string(tok_[1]));
    have_suite_ = true;
    return OkStatus();
  }
  if (record_ == "provenance") {
    if (have_provenance_) return Error("text", "duplicate 'provenance' record");
    if (rest_.empty()) return Error("text", "empty provenance");
    suite_.set_provenance(std::string(rest_));
    have_provenance_ = true;
    return OkStatus();
  }
  if (record_ == profile_format::kMagic) return Error("", "duplicate header");
  return Error("", "unknown record type " + Quote(record_));
}

// model_hash VARIANT HEX: the 16 hex digits of HashModelFile of the file it was measured on.
Status Parser::ParseModelHash() {
  RETURN_IF_ERROR(ExpectFields({"variant", "hash"}, false));
  ASSIGN_OR_RETURN(VariantId v, Ref(1, "variant", "variant", variants_));
  if (suite_.ModelHash(v)) return Error("variant", "duplicate model_hash for " + Quote(tok_[1]));
  const std::string_view hex = tok_[2];
  const std::optional<uint64_t> hash = ParseUnsigned(hex, 16);
  if (hex.size() != 16 || !hash) {
    return Error("hash", "expected 16 hex digits, got " + Quote(hex));
  }
  suite_.SetModelHash(v, *hash);
  return OkStatus();
}

Status Parser::ParseTask() {
  // The output tensor's three fields are optional (older suites and emulated models).
  if (tok_.size() - 1 != 8) {
    RETURN_IF_ERROR(ExpectFields({"name", "slo_us", "input_name", "datatype", "shape"}, false));
  }
  TaskSpec t;
  ASSIGN_OR_RETURN(t.name, NewName(1, "name", tasks_));
  ASSIGN_OR_RETURN(int64_t slo, Int(2, "slo_us", 1));
  t.default_slo = Duration(slo);
  t.input_name = std::string(tok_[3]);
  ASSIGN_OR_RETURN(t.input_datatype, Datatype(4, "datatype"));
  ASSIGN_OR_RETURN(t.input_shape, Shape(5, "shape"));
  if (tok_.size() - 1 == 8) {
    t.output_name = std::string(tok_[6]);
    ASSIGN_OR_RETURN(t.output_datatype, Datatype(7, "output_datatype"));
    ASSIGN_OR_RETURN(t.output_shape, Shape(8, "output_shape"));
  }
  std::string name = t.name;  // argument order is unspecified: copy before the move
  tasks_.emplace(std::move(name), suite_.AddTask(std::move(t)));
  return OkStatus();
}

Status Parser::ParseHardware() {
  RETURN_IF_ERROR(ExpectFields({"name", "price_per_hour", "cores", "memory_gb"}, false));
  HardwareSpec h;
  ASSIGN_OR_RETURN(h.name, NewName(1, "name", hardware_));
  ASSIGN_OR_RETURN(h.price_per_hour, Number(2, "price_per_hour", 0, HUGE_VAL));
  ASSIGN_OR_RETURN(int64_t cores, Int(3, "cores", 1));
  if (cores > 1 << 20) return Error("cores", "implausible core count " + Quote(tok_[3]));
  h.cores = static_cast<int>(cores);
  ASSIGN_OR_RETURN(h.memory_gb, Number(4, "memory_gb", 0, HUGE_VAL));
  std::string name = h.name;  // argument order is unspecified: copy before the move
  hardware_.emplace(std::move(name), suite_.AddHardware(std::move(h)));
  return OkStatus();
}

Status Parser::ParseVariant() {
  RETURN_IF_ERROR(ExpectFields({"name", "task", "accuracy", "memory_mb", "load_time_us"}, false));
  VariantSpec v;
  ASSIGN_OR_RETURN(v.name, NewName(1, "name", variants_));
  ASSIGN_OR_RETURN(v.task, Ref(2, "task", "task", tasks_));
  ASSIGN_OR_RETURN(v.accuracy, Number(3, "accuracy", 0, 100));
  ASSIGN_OR_RETURN(v.memory_mb, Number(4, "memory_mb", 0, HUGE_VAL));
  ASSIGN_OR_RETURN(int64_t load_us, Int(5, "load_time_us", 0));
  v.load_time = Duration(load_us);
  std::string name = v.name;  // argument order is unspecified: copy before the move
  variants_.emplace(std::move(name), suite_.AddVariant(std::move(v)));
  return OkStatus();
}

Status Parser::ParseSamples(bool is_load) {
  RETURN_IF_ERROR(ExpectFields({"hardware", "variant", "rows", "sample_us"}, true));
  ASSIGN_OR_RETURN(HardwareId hw, Ref(1, "hardware", "hardware type", hardware_));
  ASSIGN_OR_RETURN(VariantId v, Ref(2, "variant", "variant", variants_));
  ASSIGN_OR_RETURN(int64_t rows, Int(3, "rows", 1));
  if (rows > 1 << 30) return Error("rows", "implausible batch size " + Quote(tok_[3]));
  const SampleKey key{hw, v, static_cast<int>(rows)};
  if (!group_.active || group_.is_load != is_load || group_.key != key) {
    RETURN_IF_ERROR(FlushGroup());
    group_.active = true;
    group_.is_load = is_load;
    group_.key = key;
    group_.line = line_no_;
    // Lists of one suite are about the same length: size the next like the last (no regrowth).
    group_.samples.reserve(group_.last_size);
  }
  for (size_t i = 4; i < tok_.size(); ++i) {
    const std::string_view t = tok_[i];
    int64_t us = 0;
    if (!ParseIntegerToken(t, us)) {
      return Error("sample_us", "expected an integer number of microseconds, got " + Quote(t));
    }
    if (us < 0) return Error("sample_us", "negative latency " + Quote(t));
    group_.samples.push_back(us);
  }
  return OkStatus();
}

Status Parser::FlushGroup() {
  if (!group_.active) return OkStatus();
  group_.active = false;
  const auto [hw, v, rows] = group_.key;
  const std::string_view record = group_.is_load ? "load" : "latency";
  const std::string what = std::string(record) + " for (" + suite_.hardware()[hw].name + ", " +
                           suite_.variants()[v].name + ", " + std::to_string(rows) + ")";
  std::vector<int64_t> samples = std::move(group_.samples);
  group_.samples.clear();
  group_.last_size = samples.size();
  if (!group_.is_load) {
    auto [it, inserted] = latency_seen_.emplace(group_.key, std::pair(group_.line, samples.size()));
    if (!inserted) {
      return ErrorAt(group_.line, record, "rows",
                     what + " already given at line " + std::to_string(it->second.first) +
                         " (continuation lines must be adjacent)");
    }
    suite_.AddLatency(hw, v, rows, LatencyDistribution(std::move(samples)));
    return OkStatus();
  }
  auto lat = latency_seen_.find(group_.key);
  if (lat == latency_seen_.end()) {
    return ErrorAt(group_.line, record, "rows", what + " has no preceding latency record");
  }
  auto [it, inserted] = load_seen_.emplace(group_.key, group_.line);
  if (!inserted) {
    return ErrorAt(group_.line, record, "rows",
                   what + " already given at line " + std::to_string(it->second));
  }
  if (samples.size() != lat->second.second) {
    return ErrorAt(group_.line, record, "sample_us",
                   what + " has " + std::to_string(samples.size()) +
                       " samples but the latency at line " + std::to_string(lat->second.first) +
                       " has " + std::to_string(lat->second.second) +
                       " (load samples pair with latency samples)");
  }
  suite_.AddLoadLatency(hw, v, rows, LatencyDistribution(std::move(samples)));
  return OkStatus();
}

Status Parser::ParseExecHist() {
  RETURN_IF_ERROR(
      ExpectFields({"variant", "app", "first_bin_start_us", "bin_width_us", "weight"}, true));
  ExecHistogram h;
  ASSIGN_OR_RETURN(h.variant, Ref(1, "variant", "variant", variants_));
  h.app = std::string(tok_[2]);
  for (const ExecHistogram& other : suite_.exec_histograms()) {
    if (other.variant == h.variant && other.app == h.app) {
      return Error("app", "duplicate histogram for (" + std::string(tok_[1]) + ", " + h.app + ")");
    }
  }
  ASSIGN_OR_RETURN(int64_t start, Int(3, "first_bin_start_us", 0));
  ASSIGN_OR_RETURN(int64_t width, Int(4, "bin_width_us", 1));
  h.first_bin_start = Duration(start);
  h.bin_width = Duration(width);
  for (size_t i = 5; i < tok_.size(); ++i) {
    ASSIGN_OR_RETURN(double w, Number(i, "weight", 0, HUGE_VAL));
    h.weights.push_back(w);
  }
  suite_.AddExecHistogram(std::move(h));
  return OkStatus();
}

Status Parser::ParseCapacity() {
  RETURN_IF_ERROR(ExpectFields(
      {"hardware", "variant", "slo_us", "p99_us", "capacity_rps", "saturation_rps"}, false));
  CapacityPoint c;
  ASSIGN_OR_RETURN(c.hardware, Ref(1, "hardware", "hardware type", hardware_));
  ASSIGN_OR_RETURN(c.variant, Ref(2, "variant", "variant", variants_));
  ASSIGN_OR_RETURN(int64_t slo, Int(3, "slo_us", 1));
  c.slo = Duration(slo);
  if (tok_[4] != "-") {
    ASSIGN_OR_RETURN(int64_t p99, Int(4, "p99_us", 0));
    c.p99 = Duration(p99);
  }
  ASSIGN_OR_RETURN(c.capacity_rps, Number(5, "capacity_rps", 0, HUGE_VAL));
  ASSIGN_OR_RETURN(c.saturation_rps, Number(6, "saturation_rps", 0, HUGE_VAL));
  for (const CapacityPoint& o : suite_.capacity_points()) {
    if (o.hardware == c.hardware && o.variant == c.variant && o.slo == c.slo) {
      return Error("slo_us", "duplicate capacity point for (" + std::string(tok_[1]) + ", " +
                                 std::string(tok_[2]) + ", " + std::string(tok_[3]) + ")");
    }
  }
  suite_.AddCapacityPoint(c);
  return OkStatus();
}

StatusOr<std::string> Parser::Datatype(size_t i, const char* field) const {
  for (std::string_view d : kDatatypes) {
    if (d == tok_[i]) return std::string(d);
  }
  return Error(field, "unknown KServe v2 datatype " + Quote(tok_[i]));
}

StatusOr<std::vector<int64_t>> Parser::Shape(size_t i, const char* field) const {
  std::vector<int64_t> dims;
  std::string_view shape = tok_[i];
  while (true) {
    const size_t comma = shape.find(',');
    const std::string_view dim = shape.substr(0, comma);
    int64_t d = 0;
    if (!ParseIntegerToken(dim, d) || (d < 1 && d != -1)) {
      return Error(field,
                   "expected comma-separated dimensions (-1 or positive), got " + Quote(tok_[i]));
    }
    dims.push_back(d);
    if (comma == std::string_view::npos) break;
    shape.remove_prefix(comma + 1);
  }
  return dims;
}

Status Parser::ExpectFields(std::initializer_list<const char*> names, bool variadic) {
  const size_t got = tok_.size() - 1;
  if (got == names.size() || (variadic && got > names.size())) return OkStatus();
  std::string layout;
  for (const char* n : names) layout += std::string(" <") + n + ">";
  if (variadic) layout += "...";
  const char* missing = got < names.size() ? names.begin()[got] : "";
  if (variadic && got + 1 == names.size()) {
    return Error(missing, "empty list (layout: " + std::string(record_) + layout + ")");
  }
  return Error(missing, "expected " + std::string(variadic ? "at least " : "") +
                            std::to_string(names.size()) + " fields, got " + std::to_string(got) +
                            " (layout: " + std::string(record_) + layout + ")");
}

Status Parser::Error(const std::string& field, const std::string& what) const {
  return ErrorAt(line_no_, record_, field, what);
}

Status Parser::ErrorAt(int line, std::string_view record, const std::string& field,
                       const std::string& what) const {
  std::string msg = origin_ + ":" + std::to_string(line) + ": ";
  if (!record.empty()) msg += std::string(record) + ": ";
  if (!field.empty()) msg += "field '" + field + "': ";
  return InvalidArgumentError(msg + what);
}

StatusOr<int64_t> Parser::Int(size_t i, const char* field, int64_t min) const {
  const std::string_view t = tok_[i];
  int64_t v = 0;
  if (!ParseIntegerToken(t, v)) return Error(field, "expected an integer, got " + Quote(t));
  if (v < min) return Error(field, "must be >= " + std::to_string(min) + ", got " + Quote(t));
  return v;
}

StatusOr<double> Parser::Number(size_t i, const char* field, double min, double max) const {
  const std::string_view t = tok_[i];
  double v = 0;
  if (!ParseNumberToken(t, v)) return Error(field, "expected a number, got " + Quote(t));
  if (v < min || v > max) {
    const std::string range = std::isinf(max)
                                  ? ">= " + FormatBound(min)
                                  : "in [" + FormatBound(min) + ", " + FormatBound(max) + "]";
    return Error(field, "must be " + range + ", got " + Quote(t));
  }
  return v;
}

StatusOr<std::string> Parser::NewName(
    size_t i, const char* field, const std::unordered_map<std::string, uint32_t>& names) const {
  std::string name(tok_[i]);
  if (names.count(name) > 0) return Error(field, "duplicate name " + Quote(name));
  return name;
}

StatusOr<uint32_t> Parser::Ref(size_t i, const char* field, const char* what,
                               const std::unordered_map<std::string, uint32_t>& names) const {
  auto it = names.find(std::string(tok_[i]));
  if (it == names.end()) {
    return Error(
        field, std::string("unknown ") + what + " " + Quote(tok_[i]) + " (declare it before use)");
  }
  return it->second;
}

}  // namespace

StatusOr<ProfileSuite> ParseProfileText(std::string_view text, const std::string& origin) {
  Parser parser(origin);
  return parser.Parse(text);
}

}  // namespace sloserve
