// libFuzzer target (docs/fuzzing.md): the YAML experiment/serve config loader and the
// run spec built from it (every option's range check). Property: a refusal is an error
// with a message; nothing crashes or trips a sanitizer (float->int casts included).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "sloserve/sim/experiment_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sloserve;
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  auto config = ParseExperimentConfig(yaml, "fuzz.yaml");
  if (!config.ok()) {
    fuzz::Check(!config.status().message().empty(), "config refusal without a message");
    return 0;
  }
  auto spec = RunSpecFromFlat(config->base, /*with_workload=*/false);
  if (!spec.ok()) {
    fuzz::Check(!spec.status().message().empty(), "run spec refusal without a message");
  }
  return 0;
}
