#pragma once
// Shared fixtures of the Kairos tests: a hand-made two-type suite (dispatch and bound
// arithmetic by hand) and RM2 runs on the real kairos-recsys suite.
#include <string>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/profile/profile.h"

namespace sloserve::testing {

// gpu: 10/100/1000 rows -> 2/10/50 ms; cpu: 1/20/200 ms; task QoS 100 ms, so the cpu
// serves up to 100 rows within it and misses it at 1000. C_cpu = 50/200 = 0.25.
inline ProfileSuite TwoTypeSuite() {
  ProfileSuite s;
  s.set_name("two");
  TaskSpec t;
  t.name = "t";
  t.default_slo = Millis(100);
  s.AddTask(t);
  VariantSpec v;
  v.name = "v";
  const VariantId vid = s.AddVariant(v);
  const HardwareId gpu = s.AddHardware(HardwareSpec{"gpu", 0.5, 4, 16});
  const HardwareId cpu = s.AddHardware(HardwareSpec{"cpu", 0.15, 2, 16});
  const int rows[] = {10, 100, 1000};
  const int64_t gpu_ms[] = {2, 10, 50}, cpu_ms[] = {1, 20, 200};
  for (int k = 0; k < 3; ++k) {
    s.AddLatency(gpu, vid, rows[k], LatencyDistribution(std::vector<int64_t>(3, gpu_ms[k] * 1000)));
    s.AddLatency(cpu, vid, rows[k], LatencyDistribution(std::vector<int64_t>(3, cpu_ms[k] * 1000)));
  }
  return s;
}

// RM2 (QoS 350 ms) on kairos-recsys: DeepRecSys sizes, sampled service times, one query
// per instance at a time, Poisson arrivals (60 qps for 60 s unless changed).
inline RunSpec Rm2Run(const std::string& dispatch,
                      const std::string& hardware = "g4dn.xlarge:3,c5n.2xlarge:1,r5n.large:3") {
  RunSpec spec;
  spec.suite = "kairos-recsys";
  spec.task = "rm2";
  spec.hardware = hardware;
  spec.arrival.kind = "poisson";
  spec.arrival.rate_qps = 60;
  spec.arrival.horizon = Seconds(60);
  spec.sizes = "deeprecsys";
  spec.service.mode = ServiceTimeOptions::Mode::kSample;
  spec.policy.batching = "single";
  spec.policy.dispatch = dispatch;
  spec.policy.name = dispatch;
  return spec;
}

}  // namespace sloserve::testing
