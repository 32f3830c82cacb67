#pragma once
// The KServe v2 HTTP/1.1 frontend (Boost.Beast on Asio, hidden behind a pimpl so only
// http_server.cc pays Beast's compile time).
//
// Threading: each of the `threads` io threads runs an io_context of its own, and each
// connection is given to one of them when accepted (round robin), as nginx gives one to a
// worker: a connection is a chain of async reads and writes on that thread alone, with no
// strand; an idle keep-alive connection holds no thread, only a pending read (closed
// after `idle_timeout`). An inference request is submitted to the InferenceBackend and
// the io thread moves on; when the backend calls `done` (from any thread) the outcome is
// posted back to the connection's io thread, which renders and writes the response. One request per
// connection is in flight at a time (pipelined requests wait in the read buffer, answered in
// order).
//
// Stop() is graceful: it stops accepting, closes idle connections, answers requests that
// arrive meanwhile with 503, waits until the backend has called `done` for every
// submitted request and those responses are written (bounded by `drain_timeout` for
// the writes), then joins the io threads. It relies on the backend contract that `done`
// is called exactly once for every Submit.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/server/access_control.h"
#include "sloserve/server/inference_backend.h"
#include "sloserve/server/request_metrics.h"
#include "sloserve/server/server_metrics.h"
#include "sloserve/server/tls_files.h"

namespace sloserve {

class HttpServer {
 public:
  // serve's default io-thread count: one per hardware thread (as nginx's workers), at most
  // kMaxDefaultThreads (one engine thread takes what they read). Each runs a loop of its
  // own, so they do not wake each other: on a quiet 2-core machine two served 101-104k
  // requests/s against one's 80k (when they shared one io_context through strands, one
  // had served 20% more than two; docs/benchmarks.md, "2026-11-28"). `--threads`
  // overrides it.
  static int DefaultThreads();
  static constexpr int kMaxDefaultThreads = 16;

  struct Options {
    std::string host = "127.0.0.1";
    uint16_t port = 8000;                      // 0 = pick an ephemeral port
    int threads = 2;                           // io threads
    size_t max_body_bytes = size_t{16} << 20;  // larger bodies get 413
    Duration max_slo = Seconds(60);            // requests asking for more get 400
    Duration idle_timeout = Seconds(60);       // keep-alive: wait for the next request's first byte
    // Slow clients (slow-loris): a request's header must be complete within
    // `header_timeout` of its first byte (of the connection's opening, for the first
    // request); its body within `body_timeout` plus one second per `min_body_rate` bytes
    // received. A client that falls behind is closed.
    Duration header_timeout = Seconds(10);
    Duration body_timeout = Seconds(10);
    size_t min_body_rate = 64 * 1024;  // bytes per second
    // Request bodies being read or parsed, over all connections (Content-Length charged
    // before the body is read, chunked bodies as they arrive, then the parsed JSON tree's
    // estimate); a request that does not fit gets 503 + Retry-After. One request is always
    // let through when nothing else is charged.
    size_t max_inflight_body_bytes = size_t{256} << 20;
    // Bodies from this size are parsed on a separate thread, not on the io threads.
    size_t offload_parse_bytes = size_t{1} << 20;
    Duration write_timeout = Seconds(30);  // a client that does not read is dropped
    Duration drain_timeout = Seconds(5);   // Stop(): wait for final writes
    // At this many open connections a new one takes the place of the oldest that has not
    // delivered a request, else of the longest-idle keep-alive one; with neither (every
    // connection busy) it gets 503 (+ Retry-After) and is closed. So clients holding
    // connections open can neither exhaust the file descriptors nor keep others out.
    size_t max_connections = 10000;
    // Start() fixes glibc's mmap threshold here (process-wide, heap_release.h), so request
    // bodies, their tensors and parse buffers of this size or more go back to the OS when
    // freed instead of staying in the heap after a burst. 0 = leave the allocator alone.
    // (The LibTorch executor sets its own at its first batch: it keeps memory on purpose.)
    size_t mmap_threshold_bytes = size_t{1} << 20;
    // Set: one JSON line per inference request with its id (serve --log-format json).
    std::function<void(const std::string&)> access_log;
    // Per-request histograms and counters shared with other frontends of the backend (the
    // gRPC server), rendered in /metrics; null = the handler keeps its own.
    std::shared_ptr<RequestMetrics> request_metrics;
    std::string build_revision = "unknown";  // /metrics' sloserve_build_info (git revision)
    // Model control and the admin token (docs/serve.md "Security"): by default load and
    // unload are refused (403) and nothing asks for a token.
    AccessOptions access;
    // HTTPS when tls.cert_file is set (with a client CA: only clients presenting a
    // certificate it signed). The handshake must finish within header_timeout; a plain
    // HTTP request on the port fails it and is closed.
    TlsFiles tls;
  };

  // Validates the options; `backend` must outlive the server. The task table is read
  // from backend->Tasks() once, here.
  static StatusOr<std::unique_ptr<HttpServer>> Create(Options options, InferenceBackend* backend);
  ~HttpServer();  // calls Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the io threads; returns the bound port.
  StatusOr<uint16_t> Start();
  // Graceful shutdown (see the class comment); idempotent.
  void Stop();

  // HTTPS: re-reads options.tls's files (serve on SIGHUP) for the connections accepted
  // from now on; open ones keep their certificate. On an error (a missing file, a key that
  // does not match) the old certificate stays. FailedPrecondition when TLS is off.
  Status ReloadTls();

  uint16_t port() const;
  const ServerMetrics& metrics() const;
  // Connections idle between requests, the ones a connection beyond
  // Options::max_connections may evict (longest idle first).
  size_t IdleConnections() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sloserve
