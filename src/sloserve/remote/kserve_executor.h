#pragma once
// Any KServe v2 (Open Inference Protocol) gRPC server as the workers of `sloserve serve`
// (docs/remote-workers.md, "KServe v2 servers as workers"): engine worker i is the server
// at addresses[i], and each RunBatch is ONE ModelInfer whose input is the batch's queries'
// inputs stacked along the batch dimension (rows in launch order, raw little-endian
// bytes); the answer's outputs are split back by rows, one output set per query. So a
// Triton or KServe model server (or another `sloserve serve`) executes the batches the
// engine forms. LoadVariant asks the server whether the model is ready (ModelReady; not
// ready = a failed load) and UnloadVariant succeeds at once: the server manages its own
// models. A failed call fails its action (the engine re-queues the batch's queries once,
// then drops them as executor_error); every call has a deadline. Health: each server gets
// a ServerReady check every `health_interval` (remote::WorkerHealth): a server that fails
// `failures_to_down` checks in a row, or whose call finds it gone, is marked down (its
// calls in flight fail, the engine gives its load to the others) and rejoins when a check
// succeeds again.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/core/payload_store.h"
#include "sloserve/engine/worker_protocol.h"
#include "sloserve/profile/profile.h"

namespace grpc {
class ChannelCredentials;
}  // namespace grpc

namespace sloserve {

struct KServeExecutorOptions {
  std::vector<std::string> addresses;  // one per engine worker, in WorkerId order
  // The server's model for every variant; empty = the variant's name (a server with one
  // model per variant, e.g. Triton with resnet18 and resnet50).
  std::string model;
  Duration call_timeout = Seconds(5);       // beyond the action's expected duration x 2
  Duration reconnect_backoff = Seconds(1);  // see worker_channel.h
  Duration health_interval = Millis(200);
  Duration health_timeout = Millis(500);
  int failures_to_down = 2;
  // Down/up transitions (default: stderr).
  std::function<void(const std::string&)> log;
  // TLS to the servers (server.worker_tls_*); null = plaintext.
  std::shared_ptr<::grpc::ChannelCredentials> credentials;
};

class KServeExecutor : public WorkerExecutor {
 public:
  // `suite` and `payloads` must outlive the executor.
  KServeExecutor(const ProfileSuite* suite, PayloadStore* payloads, KServeExecutorOptions options);
  // Cancels the calls in flight and waits until their results are posted.
  ~KServeExecutor() override;

  // The replies' completion queue, for the driver's thread to sleep in and read them on
  // (as RemoteExecutor's: docs/remote-workers.md, "Threads").
  ExecutorWait* TakeWait() override;
  void Attach(ResultSink* sink) override;
  Duration Send(const WorkerAction& action) override;
  // Servers marked down now (thread-safe).
  int down_workers() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sloserve
