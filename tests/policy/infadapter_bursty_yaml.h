#pragma once
// The sim config of experiments/infadapter/bursty_window.yaml (ResNets on 1..20 cores,
// SLO 750 ms, one starting worker on 20 cores, capacity-scaled service times)
// cut to [window_start_s, window_end_s) of the trace, with one policy whose fields after
// the quota dispatcher's are `policy_fields` (e.g. "variant: resnet50, planning:
// infadapter"). Shared by the InfAdapter sim tests (tests/policy, tests/torch).
#include <string>

namespace sloserve::testing {

inline std::string InfAdapterBurstyYaml(int window_start_s, int window_end_s,
                                        const std::string& policy_fields) {
  return R"(
suite: infadapter-resnet
task: image
slo_ms: 750
workers: 1
hardware: cpu-20c
executor: {latency: capacity}
workload:
  arrival: rps_trace
  trace: twitter_rps_day15_82-103min.txt
  window_start_s: )" +
         std::to_string(window_start_s) + "\n  window_end_s: " + std::to_string(window_end_s) +
         "\npolicy: {dispatch: quota, batching: edf, selection: fixed, " + policy_fields + "}\n";
}

}  // namespace sloserve::testing
