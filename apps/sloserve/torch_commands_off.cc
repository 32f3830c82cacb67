// Builds without LibTorch (clang, see SLOSERVE_WITH_TORCH): the real-model parts refuse.
#include <cstdio>

#include "torch_commands.h"

namespace sloserve::cli {
namespace {
const char kNoTorch[] =
    "this sloserve was built without LibTorch (SLOSERVE_WITH_TORCH=OFF, the default with "
    "clang: LibTorch 1.13's headers do not compile with clang 14 in C++20); build with GCC";
}

int ProfileMeasureCommand(const std::vector<std::string>&) {
  std::fprintf(stderr, "sloserve profile measure: %s\n", kNoTorch);
  return 1;
}

StatusOr<TorchServing> PrepareTorchServing(const std::string&) {
  return UnimplementedError(kNoTorch);
}

Status CheckTorchCores(int, bool) {
  return UnimplementedError(kNoTorch);
}

Status PreloadTorchWorkers(const TorchServing&, const ProfileSuite&,
                           const std::vector<WorkerSpec>&) {
  return UnimplementedError(kNoTorch);
}

void RegisterTorchForecasters() {}

}  // namespace sloserve::cli
