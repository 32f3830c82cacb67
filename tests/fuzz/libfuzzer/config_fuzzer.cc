// libFuzzer target (docs/fuzzing.md): the YAML experiment/serve config loader and the
// run spec built from it (every option's range check). Properties: a refusal is an error
// with a message; nothing crashes or trips a sanitizer (float->int casts included); an
// accepted synthetic workload finishes: a bounded number of arrivals, each within the
// horizon and in order (load_qps 1e308 was accepted and drew arrivals at 1 us forever).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "sloserve/config/experiment_config.h"

namespace {

using namespace sloserve;

void CheckArrivalsFinish(const RunSpec& spec) {
  const ArrivalSpec& a = spec.arrival;
  if (a.kind != "poisson" && a.kind != "gamma" && a.kind != "constant") return;  // traces: files
  const double expected = a.rate_qps * ToSeconds(a.horizon);
  fuzz::Check(expected <= kMaxExpectedArrivals, "accepted workload expects too many arrivals",
              std::to_string(expected));
  auto process = MakeArrivalProcess(a, spec.seed);
  if (!process.ok())
    fuzz::Fail("accepted workload refused by the factory", process.status().message());
  int64_t last = 0;
  for (int i = 0; i < 10'000; ++i) {
    const auto t = (*process)->Next();
    if (!t) break;
    const int64_t us = t->time_since_epoch().count();
    fuzz::Check(us >= 1 && us >= last && us <= a.horizon.count(),
                "arrival out of order or past the horizon", std::to_string(us));
    last = us;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  auto config = ParseExperimentConfig(yaml, "fuzz.yaml");
  if (!config.ok()) {
    fuzz::Check(!config.status().message().empty(), "config refusal without a message");
    return 0;
  }
  auto spec = RunSpecFromFlat(config->base, /*with_workload=*/false);
  if (!spec.ok()) {
    fuzz::Check(!spec.status().message().empty(), "run spec refusal without a message");
    return 0;
  }
  // As `sloserve sim` builds it: the workload section checked too.
  auto run = RunSpecFromFlat(config->base, /*with_workload=*/true);
  if (!run.ok()) {
    fuzz::Check(!run.status().message().empty(), "workload refusal without a message");
    return 0;
  }
  CheckArrivalsFinish(*run);
  return 0;
}
