// The inference request parse of the HTTP path (issue 15 item 4): the tree-free scan of
// the common request shape (server/infer_fast_path.h) against the nlohmann tree parser,
// on the body `server-vs-nginx` sends and on a 1,024-element one.
#include <benchmark/benchmark.h>

#include <string>

#include "sloserve/server/kserve_handler.h"

namespace sloserve {
namespace {

TaskInfo BenchTask() {
  TaskInfo t;
  t.name = "image";
  t.variants = {"resnet18"};
  t.input_name = "input";
  t.input_datatype = "FP32";
  t.input_shape = {-1, -1};
  t.default_slo = Millis(150);
  return t;
}

std::string Body(int elements) {
  std::string data;
  for (int i = 0; i < elements; ++i) data += (i > 0 ? ",0." : "0.") + std::to_string(i % 997);
  return R"({"inputs":[{"name":"input","shape":[1,)" + std::to_string(elements) +
         R"(],"datatype":"FP32","data":[)" + data + R"(]}],"parameters":{"slo_ms":150}})";
}

template <bool kTree>
void BM_ParseInferRequest(benchmark::State& state) {
  const TaskInfo task = BenchTask();
  const std::string body = Body(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto call = kTree ? ParseInferRequestWithTree(task, body, Seconds(60))
                      : ParseInferRequest(task, body, Seconds(60));
    if (!call.ok()) state.SkipWithError("request rejected");
    benchmark::DoNotOptimize(call);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParseInferRequest<false>)->Name("BM_ParseInferRequest_Fast")->Arg(16)->Arg(1024);
BENCHMARK(BM_ParseInferRequest<true>)->Name("BM_ParseInferRequest_Tree")->Arg(16)->Arg(1024);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
