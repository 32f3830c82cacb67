// WriteProfileText: the canonical text form of a suite (docs/profiles.md). The embedded
// suites are written by tools/convert_profiles.py in exactly this layout.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>
#include <string>
#include <system_error>

#include "sloserve/profile/model_file_hash.h"
#include "sloserve/profile/profile.h"
#include "sloserve/profile/profile_format.h"

namespace sloserve {
namespace {

// Shortest decimal that parses back to the same double; integers without a fraction.
// Numbers whose fixed form does not fit the buffer (beyond ~1e63, or tiny ones) take the
// exponent form (the fuzzer found 2.4e83 written as 64 bytes of a truncated fixed form).
void AppendNumber(std::string& out, double x) {
  char buf[64];
  std::to_chars_result r;
  if (x == std::trunc(x) && std::fabs(x) < 1e15) {
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(x));
  } else {
    r = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed);
    if (r.ec != std::errc()) r = std::to_chars(buf, buf + sizeof(buf), x);
  }
  out.append(buf, r.ptr);
}

void AppendInt(std::string& out, int64_t x) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), x);
  out.append(buf, r.ptr);
}

void AppendShape(std::string& out, const std::vector<int64_t>& shape) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ',';
    AppendInt(out, shape[i]);
  }
}

void AppendSamples(std::string& out, const char* kind, const std::string& hw,
                   const std::string& variant, int rows, std::span<const int64_t> samples) {
  for (size_t i = 0; i < samples.size(); i += profile_format::kSamplesPerLine) {
    out += kind;
    out += ' ';
    out += hw;
    out += ' ';
    out += variant;
    out += ' ';
    AppendInt(out, rows);
    const size_t end = std::min(samples.size(), i + profile_format::kSamplesPerLine);
    for (size_t j = i; j < end; ++j) {
      out += ' ';
      AppendInt(out, samples[j]);
    }
    out += '\n';
  }
}

}  // namespace

std::string WriteProfileText(const ProfileSuite& suite) {
  std::string out;
  out += profile_format::kMagic;
  out += ' ';
  AppendInt(out, profile_format::kVersion);
  out += '\n';
  out += profile_format::kHeaderComment;
  out += "\nsuite " + suite.name() + "\nprovenance " + suite.provenance() + '\n';
  for (const TaskSpec& t : suite.tasks()) {
    out += "task " + t.name + ' ';
    AppendInt(out, t.default_slo.count());
    out += ' ' + t.input_name + ' ' + t.input_datatype + ' ';
    AppendShape(out, t.input_shape);
    const TaskSpec defaults;
    if (t.output_name != defaults.output_name || t.output_datatype != defaults.output_datatype ||
        t.output_shape != defaults.output_shape) {
      out += ' ' + t.output_name + ' ' + t.output_datatype + ' ';
      AppendShape(out, t.output_shape);
    }
    out += '\n';
  }
  for (const HardwareSpec& h : suite.hardware()) {
    out += "hardware " + h.name + ' ';
    AppendNumber(out, h.price_per_hour);
    out += ' ';
    AppendInt(out, h.cores);
    out += ' ';
    AppendNumber(out, h.memory_gb);
    out += '\n';
  }
  for (const VariantSpec& v : suite.variants()) {
    out += "variant " + v.name + ' ' + suite.tasks()[v.task].name + ' ';
    AppendNumber(out, v.accuracy);
    out += ' ';
    AppendNumber(out, v.memory_mb);
    out += ' ';
    AppendInt(out, v.load_time.count());
    out += '\n';
  }
  for (const auto& [v, hash] : suite.model_hashes()) {
    out += "model_hash " + suite.variants()[v].name + ' ' + ModelHashHex(hash) + '\n';
  }
  for (const auto& [hw, v] : suite.ProfiledPairs()) {
    const std::string& hw_name = suite.hardware()[hw].name;
    const std::string& v_name = suite.variants()[v].name;
    const std::vector<int>& load_rows = suite.LoadBatchSizes(hw, v);
    for (int rows : suite.BatchSizes(hw, v)) {
      AppendSamples(out, "latency", hw_name, v_name, rows,
                    suite.Latency(hw, v, rows)->samples_us());
      if (std::binary_search(load_rows.begin(), load_rows.end(), rows)) {
        AppendSamples(out, "load", hw_name, v_name, rows,
                      suite.LoadLatency(hw, v, rows)->samples_us());
      }
    }
  }
  for (const CapacityPoint& c : suite.capacity_points()) {
    out += "capacity " + suite.hardware()[c.hardware].name + ' ' +
           suite.variants()[c.variant].name + ' ';
    AppendInt(out, c.slo.count());
    out += ' ';
    if (c.p99) {
      AppendInt(out, c.p99->count());
    } else {
      out += '-';
    }
    out += ' ';
    AppendNumber(out, c.capacity_rps);
    out += ' ';
    AppendNumber(out, c.saturation_rps);
    out += '\n';
  }
  for (const ExecHistogram& h : suite.exec_histograms()) {
    out += "exec_hist " + suite.variants()[h.variant].name + ' ' + h.app + ' ';
    AppendInt(out, h.first_bin_start.count());
    out += ' ';
    AppendInt(out, h.bin_width.count());
    for (double w : h.weights) {
      out += ' ';
      AppendNumber(out, w);
    }
    out += '\n';
  }
  return out;
}

}  // namespace sloserve
