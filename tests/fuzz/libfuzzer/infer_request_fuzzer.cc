// libFuzzer target (docs/fuzzing.md): the inference request decoder — the JSON pre-scan
// (json_limits.h), the KServe v2 document, the JSON `data` arrays and Triton's binary
// tensor data (tensor_codec.h) — and the rendering of the answer, as the HTTP session
// runs them (scan, then Route; an accepted call is answered by RenderOutcome).
//
// Input: an optional first line "<model> [<Inference-Header-Content-Length>]" (models:
// image FP32 [-1,3], text BYTES [-1,1], ids INT64 [-1,4]), then the body. An input
// without a newline is all body, for model `image`.
// Properties: every immediate answer is a status 200..599 whose JSON body is valid and
// carries an error message when >= 400; an accepted call has rows >= 1 and its input's
// bytes hold the declared shape; its rendered answer's JSON part is valid JSON.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_check.h"
#include "sloserve/server/json_limits.h"
#include "sloserve/server/kserve_handler.h"
#include "sloserve/server/tensor_codec.h"
#include "support/fake_backend.h"

namespace sloserve {
namespace {

TaskInfo FuzzTask(std::string name, std::string datatype, std::vector<int64_t> shape) {
  TaskInfo t = FakeImageTask();
  t.name = std::move(name);
  t.input_datatype = std::move(datatype);
  t.input_shape = std::move(shape);
  return t;
}

const std::vector<TaskInfo>& FuzzTasks() {
  static const std::vector<TaskInfo> tasks = {FuzzTask("image", "FP32", {-1, 3}),
                                              FuzzTask("text", "BYTES", {-1, 1}),
                                              FuzzTask("ids", "INT64", {-1, 4})};
  return tasks;
}

void CheckAnswer(const HttpResponse& r) {
  fuzz::Check(r.status >= 200 && r.status <= 599, "status out of range", std::to_string(r.status));
  if (std::string_view(r.content_type) != "application/json") return;
  std::string_view json = r.body;
  if (r.inference_header_length > 0) {
    fuzz::Check(r.inference_header_length <= r.body.size(), "binary header past the body");
    json = json.substr(0, r.inference_header_length);
  }
  fuzz::Check(fuzz::IsValidJson(json), "answer is not valid JSON", r.body);
  if (r.status >= 400) {
    const auto doc = nlohmann::json::parse(json);
    fuzz::Check(doc.contains("error") && doc["error"].is_string() &&
                    !doc["error"].get<std::string>().empty(),
                "error answer without a message", r.body);
  }
}

}  // namespace
}  // namespace sloserve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sloserve;
  static FakeBackend backend(FakeBackend::Options{.tasks = FuzzTasks()});
  static const KServeHandler handler({}, FuzzTasks(), &backend, nullptr);

  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string model = "image";
  std::string_view json_length;
  if (const size_t nl = input.find('\n'); nl != std::string_view::npos) {
    std::string_view head = input.substr(0, nl);
    input.remove_prefix(nl + 1);
    const size_t space = head.find(' ');
    model = std::string(head.substr(0, space));
    if (space != std::string_view::npos) json_length = head.substr(space + 1);
  }
  const std::string body(input);
  const std::string target = "/v2/models/" + model + "/infer";

  // The session's order: the bounded pre-scan of the JSON part, then the parse.
  std::string_view json_part = body;
  size_t n = 0;
  const char* end = json_length.data() + json_length.size();
  if (const auto [at, err] = std::from_chars(json_length.data(), end, n);
      !json_length.empty() && err == std::errc() && at == end && n <= body.size()) {
    json_part = json_part.substr(0, n);
  }
  if (!ScanJsonShape(json_part, JsonLimits{}).ok()) return 0;

  auto routed = handler.Route(HttpMethod::kPost, target, body, json_length);
  if (auto* r = std::get_if<HttpResponse>(&routed)) {
    CheckAnswer(*r);
    return 0;
  }
  const InferCall& call = std::get<InferCall>(routed);
  fuzz::Check(call.request.rows >= 1, "accepted call without rows");
  fuzz::Check(call.request.task == model, "accepted call for another model", call.request.task);
  for (const Tensor& t : call.request.inputs) {
    int64_t elements = 1;
    for (int64_t d : t.shape) elements *= d;
    fuzz::Check(TensorDataValid(t, elements), "accepted input's bytes do not hold its shape",
                t.name);
  }
  // Answer it twice: with the emulated executor's empty outputs (zeros of the batch's
  // rows), and echoing the input's bytes as the output (valid or not for its shape).
  InferOutcome outcome;
  outcome.variant = "v";
  outcome.worker = "w0";
  outcome.batch_size = call.request.rows;
  CheckAnswer(handler.RenderOutcome(call, outcome));
  if (!call.request.inputs.empty()) {
    Tensor echo = call.request.inputs.front();
    echo.name = "output";
    echo.shape = {call.request.rows, 1};
    outcome.outputs.push_back(std::move(echo));
    CheckAnswer(handler.RenderOutcome(call, outcome));
  }
  return 0;
}
