#pragma once
// Process-wide gRPC settings for `serve` with remote workers and for `sloserve worker`
// (docs/remote-workers.md, "Threads"). No gRPC header here: apps include it anywhere.

namespace sloserve::remote {

// Makes this process's gRPC poll each completion queue's own connections (poll strategy
// "poll") instead of sharing one epoll set among every thread that waits on any queue
// (epoll1, the default on Linux), unless GRPC_POLL_STRATEGY is set already. Under epoll1
// an event wakes the thread polling the set, which hands polling to another waiting
// thread (a second wake-up) and kicks the queue's own thread (a third) when it is not
// itself; with "poll" the engine thread waiting for replies polls the workers'
// connections itself: one wake-up per reply (docs/benchmarks.md, "2026-11-28"). `serve`
// calls it when it has remote workers, before its first gRPC object exists (gRPC reads
// the setting once, at its first initialisation).
void PreferOwnQueuePolling();

// Turns off abseil's mutex deadlock detection for this process. Debian's abseil is built
// with it on (no NDEBUG), so every lock of gRPC's mutexes updates a global lock-order
// graph (GraphCycles::GetId: 1.4-1.9% of serve's engine thread with remote workers,
// docs/benchmarks.md); `serve` and `sloserve worker` call it at start.
void SkipMutexDeadlockDetection();

}  // namespace sloserve::remote
