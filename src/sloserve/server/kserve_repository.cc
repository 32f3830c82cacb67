// The model list (GET /v2/models), Triton's repository index and the repository
// extension's load/unload of KServeHandler (docs/protocol.md "Model repository").
#include <nlohmann/json.hpp>

#include "sloserve/core/echo_name.h"
#include "sloserve/server/json_util.h"
#include "sloserve/server/kserve_handler.h"
#include "sloserve/server/kserve_http_util.h"
#include "sloserve/server/unknown_model.h"

namespace sloserve {

namespace {
using json = nlohmann::json;
using kserve_http::Error;
using kserve_http::MethodNotAllowed;
using kserve_http::SplitPath;
}  // namespace

// A task's state in the repository index and its readiness: "" when it serves, else why
// not (the backend is starting, or the task is not loaded).
std::string KServeHandler::ModelNotReadyReason(std::string_view model) const {
  if (!backend_->Ready()) {
    const std::string why = backend_->NotReadyReason();
    return why.empty() ? "the server is not ready" : why;
  }
  const ModelState state = backend_->StateOf(model);
  switch (state) {
    case ModelState::kLoaded:
      return "";
    case ModelState::kLoading:
      return "loading";
    case ModelState::kUnloading:
      return "unloading";
    case ModelState::kUnloaded:
      break;
  }
  return "unloaded (POST /v2/repository/models/" + std::string(model) + "/load loads it)";
}

HttpResponse KServeHandler::RepositoryIndex() const {
  const bool ready = backend_->Ready();
  std::string out = "[";
  for (const auto& [name, entry] : tasks_) {
    if (out.size() > 1) out += ',';
    out += "{\"name\":";
    AppendJsonString(out, name);
    const std::string why = ModelNotReadyReason(name);
    out += ",\"state\":\"";
    out += ready ? ModelStateName(backend_->StateOf(name)) : "UNAVAILABLE";
    out += '"';
    if (!why.empty()) {
      out += ",\"reason\":";
      AppendJsonString(out, why);
    }
    out += '}';
  }
  return HttpResponse{200, out + "]"};
}

Routed KServeHandler::RouteRepository(HttpMethod method, std::string_view rest,
                                      std::string_view body, std::string_view authorization) const {
  // Everything under /v2/repository/models/ is model control: refused before it is parsed.
  if (auto denied = Denied(Endpoint::kControl, authorization)) return std::move(*denied);
  std::vector<std::string> parts;
  if (!SplitPath(rest, parts)) {
    return Error(
        400, "malformed percent-encoding in path '/v2/repository/models/" + EchoName(rest) + "'");
  }
  if (parts.size() != 2 || (parts[1] != "load" && parts[1] != "unload")) {
    return Error(404, "unknown path '/v2/repository/models/" + EchoName(rest) +
                          "' (use /v2/repository/models/{name}/load or /unload)");
  }
  if (method != HttpMethod::kPost) return MethodNotAllowed("POST");
  if (FindTask(parts[0]) == nullptr) return Error(404, UnknownModelMessage(parts[0], model_names_));
  // Triton's optional body: {"parameters": {...}}. sloserve loads the model's configured
  // variants, so a parameter (a config override, files) would be silently ignored: refused.
  if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
      return Error(400, "the body of a repository request must be a JSON object");
    }
    for (const auto& [key, value] : doc.items()) {
      if (key != "parameters")
        return Error(400, "unknown member '" + EchoName(key) + "' in the body");
      if (!value.is_object() || !value.empty()) {
        return Error(400,
                     "repository parameters are not supported: sloserve loads the model's "
                     "configured variants (send no parameters)");
      }
    }
  }
  return RepositoryCall{parts[0], parts[1] == "load"};
}

HttpResponse KServeHandler::RenderRepository(const RepositoryCall& call,
                                             const Status& status) const {
  if (!status.ok()) return Error(HttpStatusFromCode(status.code()), status.message());
  std::string out = "{\"name\":";
  AppendJsonString(out, call.model);
  // The state this call left the model in: another client's load or unload since may
  // have moved it on, which the answer to this one must not report as its own outcome.
  out += ",\"state\":\"";
  out += ModelStateName(call.load ? ModelState::kLoaded : ModelState::kUnloaded);
  return HttpResponse{200, out + "\"}"};
}

// GET /v2/models: every model served, with its state as in the repository index, its
// default SLO and row limit: {"models":[{"name":"image","state":"READY",
// "default_slo_ms":150,"max_batch_size":9}, ...]}. Not part of the KServe v2 protocol
// (which lists models only through the repository index); sloserve serves many models on
// one pool, and a client should find them without model control.
HttpResponse KServeHandler::ModelList() const {
  const bool ready = backend_->Ready();
  std::string out = "{\"models\":[";
  bool first = true;
  for (const auto& [name, entry] : tasks_) {
    if (!first) out += ',';
    first = false;
    out += "{\"name\":";
    AppendJsonString(out, name);
    out += ",\"state\":\"";
    out += ready ? ModelStateName(backend_->StateOf(name)) : "UNAVAILABLE";
    out += "\",\"default_slo_ms\":";
    out += json(ToMillis(entry.info.default_slo)).dump();
    if (entry.info.max_batch_size > 0)
      out += ",\"max_batch_size\":" + std::to_string(entry.info.max_batch_size);
    out += '}';
  }
  return HttpResponse{200, out + "]}"};
}

}  // namespace sloserve
