// Profile suite loading (issue 15): the embedded ramsis-image suite (11 MB of text, 558
// latency lists, 1.6M samples) parsed into a ProfileSuite, as every `sloserve sim`, `policy
// gen` and `serve` run on the image suite does first.
//   build/bench/profile_bench
#include <benchmark/benchmark.h>

#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

void BM_LoadSuite_RamsisImage(benchmark::State& state) {
  size_t lists = 0;
  for (auto _ : state) {
    auto s = LoadSuite("ramsis-image");
    if (!s.ok()) {
      state.SkipWithError(s.status().ToString().c_str());
      return;
    }
    lists = s->ProfiledPairs().size();
    benchmark::DoNotOptimize(s);
  }
  state.counters["hw_variant_pairs"] = static_cast<double>(lists);
}
BENCHMARK(BM_LoadSuite_RamsisImage)->Unit(benchmark::kMillisecond)->MinTime(1);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
