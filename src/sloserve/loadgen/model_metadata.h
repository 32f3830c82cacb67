#pragma once
// Reads a model's KServe v2 metadata (GET /v2/models/{model}) before a load run, so
// `sloserve loadgen` can send the input tensor the server declares (name, datatype and
// shape) instead of assuming them.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/tls_files.h"

namespace sloserve {

struct ModelInput {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;  // as declared (-1 = any; first the batch); empty if absent
  // parameters.default_slo_ms of the metadata (sloserve's extension); 0 if absent.
  double default_slo_ms = 0;
};

// The first declared input of `model`. Errors: Unavailable if the server cannot be
// reached, NotFound for an unknown model, InvalidArgument for a malformed answer.
// `tls`: HTTPS when enabled (loadgen --tls-ca ...).
StatusOr<ModelInput> FetchModelInput(const std::string& host, uint16_t port,
                                     const std::string& model, Duration timeout = Seconds(5),
                                     const TlsClientFiles& tls = {});

// Polls GET /v2/models/{model}/ready until it answers 200 (a server still starting, e.g.
// generating a policy set, answers 400 "ready": false with a reason), calling `waiting` with each
// new reason. Errors: Unavailable if unreachable or still not ready after `max_wait`, NotFound for
// an unknown model.
Status WaitUntilModelReady(const std::string& host, uint16_t port, const std::string& model,
                           Duration max_wait,
                           const std::function<void(const std::string& reason)>& waiting = {},
                           const TlsClientFiles& tls = {});

}  // namespace sloserve
