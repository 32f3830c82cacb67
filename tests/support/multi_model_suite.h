#pragma once
// A suite of several models on one hardware type, for the tests of serving many models
// from one pool (issue 31): task "image" (default SLO 100 ms; variants "img_fast" 10 ms
// and "img_slow" 30 ms at batch 1, +2 / +5 ms per extra row, 70% / 80%) and task "text"
// (default SLO 400 ms; variant "txt_only" 200 ms + 10 ms per extra row, 90%), batch 1..8
// on "hw" ($1/h, 4 cores), input FP32 [-1, 4] each. Latencies are constant (every sample
// equal), so a model's fastest latency and row limit are known by hand.
#include <cstdint>
#include <vector>

#include "sloserve/profile/profile.h"

namespace sloserve::testing {

inline ProfileSuite MultiModelSuite() {
  ProfileSuite s;
  s.set_name("two-models");
  s.set_provenance("hand-written for tests");
  TaskSpec image;
  image.name = "image";
  image.default_slo = Millis(100);
  image.input_shape = {-1, 4};
  TaskSpec text = image;
  text.name = "text";
  text.default_slo = Millis(400);
  const TaskId i = s.AddTask(image);
  const TaskId t = s.AddTask(text);
  HardwareSpec hw;
  hw.name = "hw";
  hw.price_per_hour = 1.0;
  hw.cores = 4;
  const HardwareId h = s.AddHardware(hw);
  const VariantId fast = s.AddVariant(VariantSpec{"img_fast", i, 70.0, 0, Duration(0)});
  const VariantId slow = s.AddVariant(VariantSpec{"img_slow", i, 80.0, 0, Duration(0)});
  const VariantId txt = s.AddVariant(VariantSpec{"txt_only", t, 90.0, 0, Duration(0)});
  auto constant = [](int64_t us) { return LatencyDistribution(std::vector<int64_t>(5, us)); };
  for (int b = 1; b <= 8; ++b) {
    s.AddLatency(h, fast, b, constant(10000 + 2000 * (b - 1)));
    s.AddLatency(h, slow, b, constant(30000 + 5000 * (b - 1)));
    s.AddLatency(h, txt, b, constant(200000 + 10000 * (b - 1)));
  }
  return s;
}

}  // namespace sloserve::testing
