// LibTorch executor benchmarks (issue 11, docs/benchmarks.md):
//   BM_Direct      the TorchScript module (optimised for inference, as the executor
//                  loads it) called directly on a stacked [batch,1,8,8] input
//   BM_Executor    the same batch through TorchExecutor::Send as `batch` one-row queries
//                  (third argument: 1 = modules optimised for inference, the default):
//                  payload store in and out, stacking, forward, splitting, the hop to the
//                  worker thread and the result's back; executor overhead = Executor - Direct
//   BM_ColdStart   TorchExecutor load + warm-up of each committed variant (manual time:
//                  the cold start the executor measures and reports)
// Arguments: variant index in the committed repository (sorted by name), batch size.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <torch/script.h>

#include <algorithm>
#include <cstring>

#include "sloserve/torch/blocking_executor_client.h"
#include "sloserve/torch/torch_executor.h"

namespace sloserve {
namespace {

const ModelRepository& Repo() {
  static const ModelRepository repo = [] {
    auto r = LoadModelRepository(std::string(SLOSERVE_SOURCE_DIR) + "/models");
    if (!r.ok()) std::abort();
    return *r;
  }();
  return repo;
}

const RepoVariant& VariantAt(int64_t i) {
  return Repo().tasks[0].variants[i];
}

ProfileSuite OneVariantSuite(const std::string& name) {
  ProfileSuite s;
  s.set_name("bench");
  s.set_provenance("bench");
  TaskSpec t;
  t.name = "digits";
  const TaskId task = s.AddTask(t);
  const HardwareId hw = s.AddHardware(HardwareSpec{"cpu", 0, 1, 0});
  const VariantId v = s.AddVariant(VariantSpec{name, task, 90, 1, Millis(1)});
  s.AddLatency(hw, v, 1, LatencyDistribution(std::vector<int64_t>{1}));
  return s;
}

std::vector<float> Pixels(int64_t rows) {
  std::vector<float> v(static_cast<size_t>(rows) * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 17);
  return v;
}

void BM_Direct(benchmark::State& state) {
  at::set_num_threads(1);
  const RepoVariant& cfg = VariantAt(state.range(0));
  torch::jit::Module m = torch::jit::load(cfg.model_path);
  m.eval();
  m = torch::jit::optimize_for_inference(m);  // as the executor loads it
  const int64_t batch = state.range(1);
  std::vector<float> pixels = Pixels(batch);
  c10::InferenceMode guard;
  at::Tensor x = torch::from_blob(pixels.data(), {batch, 1, 8, 8}, torch::kFloat32);
  for (int i = 0; i < 5; ++i) m.forward({x});
  for (auto _ : state) benchmark::DoNotOptimize(m.forward({x}).toTensor().data_ptr());
  state.SetLabel(cfg.name);
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_Executor(benchmark::State& state) {
  const RepoVariant& cfg = VariantAt(state.range(0));
  const int64_t batch = state.range(1);
  ProfileSuite suite = OneVariantSuite(cfg.name);
  PayloadStore store(size_t{256} << 20);
  TorchExecutorOptions options;
  options.optimize_for_inference = state.range(2) != 0;
  TorchExecutor exec(&Repo(), &suite, &store, options);
  BlockingExecutorClient client(&exec, &store);
  if (!exec.Preload(0, 0, 0).ok()) std::abort();
  std::vector<float> pixels = Pixels(1);
  Tensor one;
  one.name = "input";
  one.datatype = "FP32";
  one.shape = {1, 1, 8, 8};
  one.data.resize(pixels.size() * sizeof(float));
  std::memcpy(one.data.data(), pixels.data(), one.data.size());
  for (auto _ : state) {
    // The frontend's part (a tensor per request, put in the store) counts too.
    ActionResult r =
        client.Run(0, 0, 0, std::vector<TensorSet>(static_cast<size_t>(batch), TensorSet{one}));
    for (PayloadHandle h : r.outputs) store.Release(h);
    if (!r.status.ok()) state.SkipWithError(r.status.ToString().c_str());
  }
  state.SetLabel(cfg.name + (options.optimize_for_inference ? "" : " as loaded"));
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_ColdStart(benchmark::State& state) {
  const RepoVariant& cfg = VariantAt(state.range(0));
  ProfileSuite suite = OneVariantSuite(cfg.name);
  PayloadStore store(size_t{1} << 20);
  for (auto _ : state) {
    TorchExecutor exec(&Repo(), &suite, &store);
    StatusOr<Duration> t = exec.Preload(0, 0, 0);
    if (!t.ok()) state.SkipWithError(t.status().ToString().c_str());
    state.SetIterationTime(t.ok() ? ToSeconds(*t) : 0);
  }
  state.SetLabel(cfg.name);
}

// Variants sorted by name: 0 cnn_large, 1 cnn_medium, 2 cnn_small, 3 mlp_large,
// 4 mlp_small, 5 pooled_linear.
void OverheadArgs(benchmark::internal::Benchmark* b) {
  for (int v : {5, 1}) {
    for (int batch : {1, 32}) b->Args({v, batch});
  }
}
// The executor's overhead rows (optimised for inference, its default).
void ExecutorOverheadArgs(benchmark::internal::Benchmark* b) {
  for (int v : {5, 1}) {
    for (int batch : {1, 32}) b->Args({v, batch, 1});
  }
}
// Issue 35: one row against two for every variant, with and without
// torch::jit::optimize_for_inference (third argument), in one run:
// --benchmark_filter=BM_Executor/./[12]/.
void SmallBatchArgs(benchmark::internal::Benchmark* b) {
  for (int v = 0; v <= 5; ++v) {
    for (int optimize : {0, 1}) {
      for (int batch : {1, 2}) b->Args({v, batch, optimize});
    }
  }
}
// With --benchmark_repetitions, `min` is the figure least disturbed by other processes on a
// shared machine (docs/benchmarks.md compares the mins).
double Min(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}
BENCHMARK(BM_Direct)
    ->Apply(OverheadArgs)
    ->ComputeStatistics("min", Min)
    ->Unit(benchmark::kMicrosecond);
// Direct-call throughput on two cores (one thread and module each), the ceiling `serve`
// with two 1-core workers is compared against (docs/torch.md): pooled_linear, cnn_large.
BENCHMARK(BM_Direct)->Args({5, 1})->Args({0, 1})->Threads(2)->UseRealTime();
// Issue 35's row: the >= 1 ms batches of cnn_large (and its batch 1), one thread, against
// which bench/torch_serve.sh puts `serve` with one 1-core worker (--benchmark_filter=
// 'BM_Direct/0/[148]/real_time$').
BENCHMARK(BM_Direct)->Args({0, 1})->Args({0, 4})->Args({0, 8})->UseRealTime();
BENCHMARK(BM_Executor)
    ->Apply(ExecutorOverheadArgs)
    ->ComputeStatistics("min", Min)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Executor)
    ->Apply(SmallBatchArgs)
    ->ComputeStatistics("min", Min)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ColdStart)
    ->DenseRange(0, 5)
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sloserve

// glibc returns a freed top of the main thread's heap to the OS beyond 128 KB and serves
// blocks beyond its mmap threshold with fresh mappings, so LibTorch's per-call buffers (a
// few MB at batch 32 for the CNNs) were faulted in again on every direct call from the
// main thread (83k page faults, 5-8x slower) but not on the executor's worker thread.
// Both keep their memory here, so the two columns compare the calls, not the allocator.
int main(int argc, char** argv) {
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
