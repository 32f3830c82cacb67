// The inference request parse of the HTTP path (issues 15 and 16) per body shape: the
// server's ParseInferRequest (the tree-free scan of the common shape, then the streaming
// parser), the streaming parser alone and the nlohmann tree parser both replaced.
// Shapes: the body `server-vs-nginx` sends (16 and 1,024 FP32 elements, flat), the same
// 1,024 elements nested 32x32, INT64 tokens, BYTES strings, and a body with an id, every
// parameter and requested outputs (which the scan of the common shape leaves alone).
#include <benchmark/benchmark.h>

#include <string>

#include "sloserve/server/infer_request_parser.h"
#include "sloserve/server/kserve_handler.h"

namespace sloserve {
namespace {

TaskInfo BenchTask() {
  TaskInfo t;
  t.name = "image";
  t.variants = {"resnet18"};
  t.input_name = "input";
  t.output_name = "output";
  t.default_slo = Millis(150);
  return t;
}

enum Shape : int64_t { kFlat16, kFlat1024, kNested1024, kInt64x512, kBytes256, kFull1024 };

std::string Elements(int n, const std::string& datatype, int row) {
  std::string data;
  for (int i = 0; i < n; ++i) {
    if (i > 0) data += ',';
    if (row > 0 && i % row == 0) data += '[';
    data += datatype == "BYTES"   ? "\"tok" + std::to_string(i % 97) + "\""
            : datatype == "INT64" ? std::to_string(i * 7919 % 30522)
                                  : "0." + std::to_string(i % 997);
    if (row > 0 && i % row == row - 1) data += ']';
  }
  return "[" + data + "]";
}

std::string Body(Shape shape) {
  struct Spec {
    int n;
    const char* datatype;
    int row;
    const char* extra;
  };
  const Spec spec = shape == kFlat16       ? Spec{16, "FP32", 0, ""}
                    : shape == kFlat1024   ? Spec{1024, "FP32", 0, ""}
                    : shape == kNested1024 ? Spec{1024, "FP32", 32, ""}
                    : shape == kInt64x512  ? Spec{512, "INT64", 0, ""}
                    : shape == kBytes256   ? Spec{256, "BYTES", 0, ""}
                                           : Spec{1024, "FP32", 0, "full"};
  const std::string dims = spec.row > 0
                               ? std::to_string(spec.n / spec.row) + "," + std::to_string(spec.row)
                               : "1," + std::to_string(spec.n);
  std::string body = R"({"id":"req-1","inputs":[{"name":"input","shape":[)" + dims +
                     R"(],"datatype":")" + spec.datatype + R"(","data":)" +
                     Elements(spec.n, spec.datatype, spec.row) + "}]";
  body += std::string(spec.extra) == "full"
              ? R"(,"parameters":{"slo_ms":150,"app":"a","priority":1,"binary_data_output":false},)"
                R"("outputs":[{"name":"output","parameters":{"binary_data":true}}]})"
              : R"(,"parameters":{"slo_ms":150}})";
  return body;
}

enum class Parser { kServer, kStreaming, kTree };

template <Parser kParser>
void BM_ParseInferRequest(benchmark::State& state) {
  TaskInfo task = BenchTask();
  const std::string body = Body(static_cast<Shape>(state.range(0)));
  for (auto _ : state) {
    auto call = kParser == Parser::kServer ? ParseInferRequest(task, body, Seconds(60))
                : kParser == Parser::kStreaming
                    ? ParseInferRequestStreaming(task, body, Seconds(60))
                    : ParseInferRequestWithTree(task, body, Seconds(60));
    if (!call.ok()) state.SkipWithError(call.status().ToString().c_str());
    benchmark::DoNotOptimize(call);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgName("shape");
  for (Shape s : {kFlat16, kFlat1024, kNested1024, kInt64x512, kBytes256, kFull1024}) b->Arg(s);
}
// Named as before (Fast = what the server runs), so earlier numbers compare by name.
BENCHMARK(BM_ParseInferRequest<Parser::kServer>)->Name("BM_ParseInferRequest_Fast")->Apply(Shapes);
BENCHMARK(BM_ParseInferRequest<Parser::kStreaming>)
    ->Name("BM_ParseInferRequest_Streaming")
    ->Apply(Shapes);
BENCHMARK(BM_ParseInferRequest<Parser::kTree>)->Name("BM_ParseInferRequest_Tree")->Apply(Shapes);

}  // namespace
}  // namespace sloserve

BENCHMARK_MAIN();
