#include "sloserve/remote/worker_channel.h"

#include <algorithm>

namespace sloserve::remote {

std::shared_ptr<::grpc::Channel> WorkerChannel(
    const std::string& address, Duration reconnect_backoff,
    std::shared_ptr<::grpc::ChannelCredentials> credentials) {
  ::grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  const int max_backoff_ms =
      static_cast<int>(std::clamp<double>(ToMillis(reconnect_backoff), 1, 3'600'000));
  const int min_backoff_ms = std::min(100, max_backoff_ms);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, min_backoff_ms);
  // gRPC (1.51) uses this one as each connection attempt's shortest deadline, not as a
  // backoff: at 100 ms a handshake slower than that (a loaded machine, a TSan build: the
  // KServe e2e tests' first checks failed with "tcp handshaker shutdown") never completed
  // until the backoff had grown. 1 s: the default spacing of the attempts.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_backoff_ms);
  if (!credentials) credentials = ::grpc::InsecureChannelCredentials();
  return ::grpc::CreateCustomChannel(address, credentials, args);
}

}  // namespace sloserve::remote
