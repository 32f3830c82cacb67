// Profile suite loading (issue 15): the embedded ramsis-image suite (11 MB of text, 558
// latency lists, 1.6M samples) parsed into a ProfileSuite, as every `sloserve sim`, `policy
// gen` and `serve` run on the image suite did first; and the same suite loaded from its
// suite cache (suite_cache.h), as they do now once the cache file exists.
//   build/bench/profile_bench
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "sloserve/core/embedded_files.h"
#include "sloserve/profile/profile.h"
#include "sloserve/profile/suite_cache.h"

namespace sloserve {
namespace {

// Parsing the text (what LoadSuite does without a cache file).
void BM_LoadSuite_RamsisImage(benchmark::State& state) {
  const EmbeddedFile* f = FindEmbeddedFile("ramsis-image.prof");
  size_t lists = 0;
  for (auto _ : state) {
    auto s = ParseProfileText(f->data, "ramsis-image");
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

// Loading from the cache file (hash the text, map the file, parse the other lines): what
// LoadSuite does once the cache exists. A fresh cache dir, written before the timing.
void BM_LoadSuite_RamsisImageCached(benchmark::State& state) {
  const EmbeddedFile* f = FindEmbeddedFile("ramsis-image.prof");
  std::string dir = std::filesystem::temp_directory_path().string() + "/profile-bench-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  bool from_cache = false;
  (void)ParseProfileTextCached(f->data, "ramsis-image", dir);
  for (auto _ : state) {
    auto s =
        ParseProfileTextCached(f->data, "ramsis-image", dir, kMinCachedSuiteBytes, &from_cache);
    if (!s.ok() || !from_cache) {
      state.SkipWithError(s.ok() ? "not loaded from the cache" : s.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(s);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}
BENCHMARK(BM_LoadSuite_RamsisImageCached)->Unit(benchmark::kMillisecond)->MinTime(1);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
