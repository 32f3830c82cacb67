#pragma once
// The Open Inference Protocol's gRPC messages <-> the InferenceBackend boundary, with the
// same validation rules as the HTTP frontend (docs/protocol.md, docs/grpc.md): one input
// named and typed as declared, shape matching the declared one, data in typed `contents`
// or `raw_input_contents`, parameters `slo_ms` (int64, double or numeric string) and
// `app`; `outputs` may only name the declared output. Plain functions, no transport.
#include <grpcpp/support/status.h>

#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/proto/grpc_service.pb.h"
#include "sloserve/server/inference_backend.h"

namespace sloserve::grpc_protocol {

struct ModelInferCall {
  InferRequest request;
  std::string id;
  bool raw_output = false;  // the request sent raw_input_contents: answer raw
  // Unknown request parameters, as over HTTP (server/unknown_parameters.h): one warning
  // each, in key order, at most kMaxParameterWarnings; the response's
  // parameters["warnings"] joins them with "; ".
  std::vector<std::string> warnings;
};

// Validates `req` against `task`. Errors: InvalidArgument naming the field; NotFound for
// a model_version (versions are not exposed: the engine picks the variant per request).
StatusOr<ModelInferCall> ParseModelInfer(const TaskInfo& task,
                                         const inference::ModelInferRequest& req, Duration max_slo);

// The response to a completed call (outcome.status ok). Internal when the executor's
// outputs are not whole elements of their datatype.
Status RenderModelInfer(const TaskInfo& task, const ModelInferCall& call,
                        const InferOutcome& outcome, inference::ModelInferResponse* resp);

void RenderModelMetadata(const TaskInfo& task, inference::ModelMetadataResponse* resp);

// NOT_FOUND for any version of `task`: sloserve exposes none (as over HTTP).
Status NoVersionsError(const TaskInfo& task, const std::string& version);

// sloserve StatusCode -> gRPC status code (docs/grpc.md's table).
::grpc::StatusCode GrpcCodeOf(StatusCode code);
inline ::grpc::Status ToGrpcStatus(const Status& s) {
  return s.ok() ? ::grpc::Status::OK : ::grpc::Status(GrpcCodeOf(s.code()), s.message());
}

}  // namespace sloserve::grpc_protocol
