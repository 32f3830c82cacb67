#pragma once
// Shared by the LibTorch tests: the committed model repository, a suite naming its
// smallest variants and FP32 digit inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/profile/profile.h"

namespace sloserve::testing {

inline std::string CommittedRepository() {
  return std::string(SLOSERVE_SOURCE_DIR) + "/models";
}

// Task "digits" on one 1-core hardware type, with the given variants (accuracy and
// latency are placeholders: these tests never schedule by them).
inline ProfileSuite DigitsSuite(const std::vector<std::string>& variants, int cores = 1) {
  ProfileSuite s;
  s.set_name("digits-test");
  s.set_provenance("hand-written for tests");
  TaskSpec t;
  t.name = "digits";
  t.default_slo = Millis(100);
  t.input_shape = {-1, 1, 8, 8};
  const TaskId task = s.AddTask(t);
  const HardwareId hw = s.AddHardware(HardwareSpec{"cpu", 0, cores, 1});
  for (const std::string& name : variants) {
    const VariantId v = s.AddVariant(VariantSpec{name, task, 90, 1, Millis(1)});
    for (int rows : {1, 2, 4, 8})
      s.AddLatency(hw, v, rows, LatencyDistribution(std::vector<int64_t>{100 * rows}));
  }
  return s;
}

// `rows` digit images of deterministic pixel values 0..16.
inline Tensor DigitInput(int rows, int seed, const std::string& name = "input") {
  Tensor t;
  t.name = name;
  t.datatype = "FP32";
  t.shape = {rows, 1, 8, 8};
  std::vector<float> v(static_cast<size_t>(rows) * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + seed * 13) % 17);
  t.data.resize(v.size() * sizeof(float));
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

inline std::vector<float> FloatsOf(const Tensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace sloserve::testing
