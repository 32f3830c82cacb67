#pragma once
// A small hand-built profile suite for engine and policy tests: one task "t", two
// variants ("fast": 10 ms + 2 ms per extra row, 70%; "slow": 30 ms + 5 ms per extra
// row, 80%), batch 1..8, on hardware "hw" ($1/h, 4 cores). Latencies are constant
// (every sample equal) so expected times can be computed by hand.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/profile/profile.h"

namespace sloserve::testing {

// An embedded suite (profiles/<name>.prof), loaded once per test binary. A load error
// aborts with its message (StatusOr::value): every test using it would fail anyway.
inline const ProfileSuite& EmbeddedSuite(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ProfileSuite>> loaded;
  std::unique_ptr<ProfileSuite>& s = loaded[name];
  if (!s) s = std::make_unique<ProfileSuite>(LoadSuite(name).value());
  return *s;
}

inline ProfileSuite SmallSuite(int max_batch = 8) {
  ProfileSuite s;
  s.set_name("small");
  s.set_provenance("hand-written for tests");
  TaskSpec t;
  t.name = "t";
  t.default_slo = Millis(100);
  TaskId task = s.AddTask(t);
  HardwareSpec hw;
  hw.name = "hw";
  hw.price_per_hour = 1.0;
  hw.cores = 4;
  HardwareId h = s.AddHardware(hw);
  VariantSpec fast{"fast", task, 70.0, 0, Duration(0)};
  VariantSpec slow{"slow", task, 80.0, 0, Duration(0)};
  VariantId f = s.AddVariant(fast);
  VariantId w = s.AddVariant(slow);
  for (int b = 1; b <= max_batch; ++b) {
    s.AddLatency(h, f, b, LatencyDistribution(std::vector<int64_t>(5, 10000 + 2000 * (b - 1))));
    s.AddLatency(h, w, b, LatencyDistribution(std::vector<int64_t>(5, 30000 + 5000 * (b - 1))));
  }
  return s;
}

// A dynamic model for execution-time tests: task "t", one variant "dyn" on "hw" with
// lat(k) = 20 ms + 10 ms k (k = 1, 2, 4, 8) and, with `with_hist`, two apps: "short"
// uniform on [10, 20) ms and "long" uniform on [50, 70) ms.
inline ProfileSuite DynamicSuite(bool with_hist = true) {
  ProfileSuite s;
  s.set_name("dyn");
  s.set_provenance("test");
  TaskId t = s.AddTask(TaskSpec{"t", Millis(500)});
  HardwareId h = s.AddHardware(HardwareSpec{"hw", 1.0, 1, 1});
  VariantId v = s.AddVariant(VariantSpec{"dyn", t, 0, 0, Duration(0)});
  for (int k : {1, 2, 4, 8})
    s.AddLatency(h, v, k, LatencyDistribution(std::vector<int64_t>(3, 20000 + 10000 * k)));
  if (with_hist) {
    s.AddExecHistogram(
        ExecHistogram{"short", v, /*bin_width=*/Millis(5), /*first_bin_start=*/Millis(10), {1, 1}});
    s.AddExecHistogram(
        ExecHistogram{"long", v, /*bin_width=*/Millis(10), /*first_bin_start=*/Millis(50), {1, 1}});
  }
  return s;
}

}  // namespace sloserve::testing
