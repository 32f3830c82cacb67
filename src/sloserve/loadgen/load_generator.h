#pragma once
// Open-loop KServe v2 HTTP load generator (Boost.Beast, hidden in load_generator.cc).
//
// The caller computes the send schedule (offsets from the start, e.g. from a Poisson
// arrival process at a target QPS); RunLoad sends request i at start + schedule[i]
// whatever is outstanding. A request goes out on an idle keep-alive connection; if none
// is idle a new one is opened, up to `max_connections`; beyond that it waits in a FIFO
// and its latency still counts from its scheduled time (no coordinated omission).
// Everything runs on one thread (the caller's) with one io_context.
//
// Requests may differ in rows (`request_rows`, e.g. drawn from the simulator's query-size
// samplers): one request per distinct row count is built before the clock starts and
// written read-only, so the send path never builds a body.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/loadgen/load_report.h"
#include "sloserve/server/tls_files.h"

namespace sloserve {

struct LoadOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  std::string task;      // POST /v2/models/{task}/infer
  std::string app;       // parameters.app; empty = not sent
  int32_t priority = 0;  // parameters.priority (1 = highest); 0 = not sent
  double slo_ms = 0;     // parameters.slo_ms; <= 0 = not sent (server default)
  // The SLO the server applies when slo_ms is not sent (e.g. the model metadata's
  // parameters.default_slo_ms): the send-lag bottleneck check compares against slo_ms if
  // > 0, else this; both <= 0 = the lag is not judged (docs/loadgen.md).
  double default_slo_ms = 0;
  int32_t rows = 1;  // batch dimension of every request, unless request_rows is set
  // Per-request rows, one per schedule entry (same order); empty = every request has
  // `rows`. Each request's shape[0] is its rows (shape[0] of `shape` is ignored then).
  std::vector<int32_t> request_rows;
  std::string sizes_label;  // how the rows were drawn, for the report; empty = "constant:<rows>"
  std::string input_name = "input";
  std::string datatype = "FP32";
  std::vector<int64_t> shape;      // full shape; empty = {rows}; shape[0] must == rows (see above)
  int connections = 64;            // opened before the clock starts
  int max_connections = 512;       // cap on simultaneously open connections
  std::vector<Duration> schedule;  // send offsets from the start (sorted if not)
  Duration timeout = Seconds(30);  // per request, from its write to the full response
  Duration progress_interval = Seconds(1);
  // Real inputs with labels (loadgen --dataset): request i sends sample i mod n as one row
  // (`shape` with shape[0] = 1, FP32) and the argmax of its response's first output is
  // compared with the label kept here: LoadReport::labelled / correct. Empty = zeros.
  std::vector<std::vector<float>> dataset_inputs;
  std::vector<int> dataset_labels;
  // HTTPS when enabled (loadgen --tls-ca, --tls-cert, --tls-key): each connection's
  // handshake happens when it opens, before its first request is timed.
  TlsClientFiles tls;
  // Sent as "Authorization: Bearer <token>" with every request (loadgen --token-file), for
  // a server with server.require_token_for_infer; empty = not sent.
  std::string token;
};

struct LoadProgress {
  Duration elapsed{};
  int64_t scheduled = 0;
  int64_t sent = 0;
  int64_t completed = 0;
  int64_t ok = 0;
  int64_t queued = 0;  // waiting for a connection
  int open_connections = 0;
  // Client-bottleneck signals so far: requests that found every connection of the cap busy
  // (cumulative), and the p99 send lag over every scheduled send, those not sent yet
  // counted as on time (LoadRecorder::SendLagP99): SendLagExceeded on it never warns
  // where the final verdict would not.
  int64_t waited_for_connection = 0;
  Duration send_lag_p99{};
};
using LoadProgressFn = std::function<void(const LoadProgress&)>;

// Runs the schedule to completion (every request answered, failed or timed out). The
// report's client_bottleneck says whether the generator limited the run
// (AssessClientBottleneck with options.slo_ms, else default_slo_ms, and max_connections).
// Errors: InvalidArgument for bad options, Unavailable if the server cannot be reached
// before the start.
StatusOr<LoadReport> RunLoad(const LoadOptions& options, const LoadProgressFn& progress = {});

// The JSON body RunLoad sends (exposed for tests and for the CLI's dry runs).
StatusOr<std::string> BuildInferBody(const LoadOptions& options);
// The body of a request of `rows` rows: `options.shape` with shape[0] replaced by rows.
StatusOr<std::string> BuildInferBody(const LoadOptions& options, int32_t rows);

}  // namespace sloserve
