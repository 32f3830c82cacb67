#include "sloserve/server/http_server.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/filter.h>  // SO_ATTACH_FILTER: sealing the listener at Stop()
#endif
#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <list>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/echo_name.h"
#include "sloserve/core/mutex.h"
#include "sloserve/server/heap_release.h"
#include "sloserve/server/json_limits.h"
#include "sloserve/server/json_util.h"
#include "sloserve/server/kserve_handler.h"
#include "sloserve/server/tls_context.h"

#ifndef SLOSERVE_VERSION
#define SLOSERVE_VERSION "0.0.0"
#endif

namespace sloserve {
namespace http_server_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
// A connection's executor, by its concrete type: the io_context of the one io thread that
// runs it (each io thread runs an io_context of its own, so every handler of a connection
// runs on that thread and needs no strand, which would add a lock per handler and
// reference counts per copy). Beast's default tcp_stream holds a type-erased
// any_io_executor instead, whose copies (several per operation) allocated and counted
// references: with the strand's, about 10% of serve's CPU under load (docs/benchmarks.md
// "2026-11-28").
using IoExecutor = asio::io_context::executor_type;
using SessionSocket = asio::basic_stream_socket<tcp, IoExecutor>;
// HTTPS: TLS over the session's own stream, so its timeouts and socket stay where the
// plain path has them.
using TlsStream = asio::ssl::stream<beast::basic_stream<tcp, IoExecutor>&>;
using LoopTimer =
    asio::basic_waitable_timer<std::chrono::steady_clock,
                               asio::wait_traits<std::chrono::steady_clock>, IoExecutor>;

class Session;

// A counter file descriptor of one io loop's own (an eventfd, a timerfd) that the loop
// waits to read, on its thread (Impl::WaitOn). Waking a loop or timing it this way costs
// no lock of the io_context's and can be disarmed exactly (issue 38, IoLoop::wake and
// IoLoop::watch).
struct LoopCounter {
  explicit LoopCounter(asio::io_context& ioc) : descriptor(ioc.get_executor()) {}
  int fd = -1;  // set before the loop's thread starts (Impl::Open); owned by `descriptor`
  asio::posix::basic_stream_descriptor<IoExecutor> descriptor;
  bool stopped = false;  // Stop(): the wait is not armed again (loop thread)
};

// One io thread's event loop: its io_context, run by that thread alone, and the requests
// its connections read in the current turn (touched only on that thread).
struct IoLoop {
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<IoExecutor>> work{asio::make_work_guard(ioc)};
  std::vector<InferenceBackend::Submission> submit_batch;
  // An empty vector keeping a batch's capacity, so batches do not regrow from nothing.
  std::vector<InferenceBackend::Submission> submit_spare;
  // Sessions whose request is at the backend, to be watched for a disconnect once it has
  // been there kWatchDelay (Impl::WatchLater), and the timer that looks at them: a timerfd,
  // disarmed when the requests it was armed for are all answered (Impl::DisarmWatchIfIdle).
  // An Asio timer's cancel leaves the loop's timerfd set, so the loop woke 2 ms later for
  // nothing: with remote workers at 100 req/s, once per request (issue 38).
  std::vector<std::shared_ptr<Session>> watch_later;
  LoopCounter watch{ioc};
  bool watch_armed = false;  // the timerfd is set
  // Closes this loop's keep-alive connections idle for idle_timeout (Impl::OnIdleTimer):
  // one timer per loop, armed while connections wait, instead of a deadline armed and
  // cancelled with each request's idle read (every cancel a posted completion: a turn of
  // the loop and an epoll_wait per request, issue 38).
  LoopTimer idle_timer{ioc.get_executor()};
  bool idle_timer_pending = false;
  // Answers the backend's threads hand to this loop's sessions, run here in one handler per
  // burst (Impl::Deliver) instead of one post per answer (each a lock of the io_context's
  // queue, an operation allocated and work counted).
  Mutex outbox_mu;
  std::vector<std::pair<std::shared_ptr<Session>, InferOutcome>> outbox GUARDED_BY(outbox_mu);
  std::vector<std::pair<std::shared_ptr<Session>, InferOutcome>> outbox_spare;  // loop thread
  // How Deliver wakes this loop from another thread: an eventfd the loop waits on,
  // written outside any lock. An asio::post from another thread re-arms the loop's epoll
  // under the io_context's lock, and the loop thread, woken at once, then slept on that
  // lock (a futex wait per answer handed over: issue 38).
  LoopCounter wake{ioc};
};

constexpr size_t kHeaderLimit = 64 * 1024;
constexpr auto kLingerTimeout = std::chrono::seconds(2);
constexpr auto kSealSettle = std::chrono::milliseconds(2);   // Stop(): see SealListener
constexpr auto kDrainReadTimeout = std::chrono::seconds(2);  // Stop(): finish reading
// Beast closes the socket when its own read deadline passes, so at Stop() that deadline
// is set this much after the drain point: the session's drain timer cancels the read
// first and the socket stays open for the 503.
constexpr auto kDrainCutSlack = std::chrono::seconds(1);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
constexpr size_t kIdleReadBytes = 16 * 1024;  // first read of a keep-alive request
// How long a request is at the backend before its connection is watched for a disconnect
// (docs/admission.md "Cancellation of disconnected clients"): arming the watch cost an
// epoll_ctl and a cancelled operation per request, and most answers come sooner than this.
constexpr auto kWatchDelay = std::chrono::milliseconds(2);
// After a body this large is freed, free heap pages go back to the OS (glibc keeps them
// otherwise: a burst of large requests would leave the process at its peak RSS).
constexpr size_t kTrimAfterBytes = size_t{4} << 20;

}  // namespace http_server_internal

using http_server_internal::kAcceptRetryDelay;
using http_server_internal::kTrimAfterBytes;
using http_server_internal::Session;
namespace asio = http_server_internal::asio;
namespace beast = http_server_internal::beast;
namespace http = http_server_internal::http;
using tcp = http_server_internal::tcp;
using http_server_internal::IoLoop;
using http_server_internal::LoopCounter;
using http_server_internal::SessionSocket;

struct HttpServer::Impl {
  // The loop whose SubmitBatch this thread is in (its backend may answer inline), or null.
  static thread_local const IoLoop* submitting_loop;

  Impl(Options opts, InferenceBackend* b) : options(std::move(opts)), backend(b) {}

  void DoAccept() EXCLUDES(mu);
  void OnAccept(beast::error_code ec, SessionSocket sock, IoLoop* loop) EXCLUDES(mu);
  void StartSession(SessionSocket sock, IoLoop* loop) EXCLUDES(mu);
  // Accepts one connection already queued (Stop()).
  beast::error_code AcceptQueued() EXCLUDES(mu);
  // The io loop the next connection runs on (round robin; the acceptor's thread only).
  IoLoop* NextLoop() { return loops[next_loop++ % loops.size()].get(); }
  void RunIoThread(IoLoop* loop) EXCLUDES(mu);
  void Unregister(Session* session) EXCLUDES(mu) {
    MutexLock lock(mu);
    const auto it = sessions.find(session);
    if (it == sessions.end()) return;
    Unlist(it->second);
    sessions.erase(it);
  }
  // The session delivered its first whole request, or an idle keep-alive connection
  // received bytes: it can no longer be evicted, so it leaves its list.
  void Proven(Session* session) EXCLUDES(mu) {
    MutexLock lock(mu);
    if (const auto it = sessions.find(session); it != sessions.end()) Unlist(it->second);
  }
  // The session answered its request and waits for the next with nothing in flight: it
  // goes to the back of the `idle` list (which so stays ordered by last activity).
  void Idle(Session* session) EXCLUDES(mu) {
    MutexLock lock(mu);
    const auto it = sessions.find(session);
    if (it == sessions.end()) return;
    Unlist(it->second);
    it->second.it = idle.insert(idle.end(), session);
    it->second.listed = &idle;
  }
  // Claims the first session of `list` that is still evictable; null if none is.
  std::shared_ptr<Session> ClaimFirst(std::list<Session*>& list) REQUIRES(mu);
  // Claims `session`, evictable since `since` (as read), to be closed: it leaves its list.
  // Null if it stopped being evictable meanwhile, or is being destroyed.
  std::shared_ptr<Session> Claim(Session* session, int64_t since) REQUIRES(mu);
  // The in-flight body budget (Options::max_inflight_body_bytes). A charge that does not
  // fit fails, unless the connection asking (holding `mine`) is the only one charged, so
  // any one request within max_body can pass.
  bool ChargeBody(size_t bytes, size_t mine) {
    size_t used = body_bytes.load();
    do {
      if (used != mine && used + bytes > options.max_inflight_body_bytes) return false;
    } while (!body_bytes.compare_exchange_weak(used, used + bytes));
    return true;
  }
  void ReleaseBody(size_t bytes) {
    const size_t before = body_bytes.fetch_sub(bytes);
#if defined(__GLIBC__)
    if (bytes >= kTrimAfterBytes && before == bytes) malloc_trim(0);
#else
    (void)before;
#endif
  }
  // Hands a request to the backend at the end of this turn of `loop` (on its thread), with
  // the others read in it: one SubmitAll, so the engine thread is woken once for all of
  // them instead of once per request (each wake-up was a context switch;
  // docs/benchmarks.md).
  void SubmitSoon(IoLoop& loop, InferenceBackend::Submission submission) {
    const bool first = loop.submit_batch.empty();
    loop.submit_batch.push_back(std::move(submission));
    // Posted behind the handlers already queued (those of this turn). The requests are
    // counted in flight, so Stop() keeps the io threads running until this has run.
    if (first) asio::post(loop.ioc, [this, &loop] { SubmitBatch(loop); });
  }
  void SubmitBatch(IoLoop& loop) {
    std::vector<InferenceBackend::Submission> batch;
    batch.swap(loop.submit_batch);
    loop.submit_batch.swap(loop.submit_spare);  // empty, with the capacity of an earlier batch
    {
      // Answers the backend gives on this thread meanwhile are drained below, not posted.
      const IoLoop* const outer = submitting_loop;
      submitting_loop = &loop;
      backend->SubmitAll(batch);
      submitting_loop = outer;
    }
    batch.clear();
    if (batch.capacity() > loop.submit_spare.capacity()) loop.submit_spare.swap(batch);
    // A backend that stepped on this thread (an idle engine, EngineRuntime::inline_steps)
    // has answered already: written now, and those answered need no disconnect watch, so
    // the watch timer is armed only for requests still at the backend (at light load, a
    // timer per request woke this thread 2 ms later for nothing).
    DrainOutbox(loop);
    PruneWatchList(loop, std::chrono::steady_clock::time_point::min());
    if (!loop.watch_later.empty()) ArmWatchTimer(loop);
  }
  // Watches `session` for a disconnect if its request is still at the backend kWatchDelay
  // from now (on the loop's thread): one timer per loop looks at all of them.
  void WatchLater(IoLoop& loop, std::shared_ptr<Session> session);
  void ArmWatchTimer(IoLoop& loop);  // unless armed
  void OnWatchTimer(IoLoop& loop);
  // After answers: disarms the watch timer if no request it watches is still at the
  // backend (only with a few listed: under load it fires with work to do anyway).
  void DisarmWatchIfIdle(IoLoop& loop);
  // Drops the sessions no longer at the backend from the watch list and starts the
  // watch of those at the backend since `due` or before.
  void PruneWatchList(IoLoop& loop, std::chrono::steady_clock::time_point due);
  // Arms `loop`'s idle timer for `at` unless it is armed (every later idle connection
  // expires after the ones already waiting) or the server is stopping.
  void ArmIdleTimer(IoLoop& loop, std::chrono::steady_clock::time_point at) {
    if (loop.idle_timer_pending || draining.load()) return;
    loop.idle_timer_pending = true;
    loop.idle_timer.expires_at(at);
    loop.idle_timer.async_wait([this, &loop](beast::error_code ec) { OnIdleTimer(loop, ec); });
  }
  // Closes the loop's connections idle for idle_timeout, and arms the timer again for the
  // next one to expire.
  void OnIdleTimer(IoLoop& loop, beast::error_code ec) EXCLUDES(mu);
  // Runs `session`'s OnOutcome on its loop (called from a backend thread).
  void Deliver(IoLoop& loop, std::shared_ptr<Session> session, InferOutcome outcome);
  void DrainOutbox(IoLoop& loop);
  // Takes `fd` (eventfd or timerfd, non-blocking) as `counter`'s and starts waiting on it:
  // `on_read(count)` runs on the loop's thread each time it becomes readable, with the
  // count read (0 when there was none: a timerfd set again since it fired).
  template <class OnRead>
  Status Open(LoopCounter& counter, int fd, const char* what, OnRead on_read);
  template <class OnRead>
  void WaitOn(LoopCounter& counter, OnRead on_read);
  void InferDone() EXCLUDES(mu) {
    metrics.InferFinished();
    LeaveInFlight();
  }
  void LeaveInFlight() EXCLUDES(mu) {
    if (in_flight.fetch_sub(1) == 1 && draining.load()) {
      MutexLock lock(mu);  // so the notification cannot slip between Stop's check and wait
      cv.NotifyAll();
    }
  }

  const Options options;
  InferenceBackend* const backend;
  ServerMetrics metrics;
  std::unique_ptr<KServeHandler> handler;
  // HTTPS: the context new connections start with; ReloadTls() replaces it, connections
  // keep the one they started with. Taken once per connection, never per request.
  std::shared_ptr<asio::ssl::context> CurrentTls() EXCLUDES(tls_mu) {
    MutexLock lock(tls_mu);
    return tls;
  }
  Mutex tls_mu;
  std::shared_ptr<asio::ssl::context> tls GUARDED_BY(tls_mu);  // null: plain HTTP

  std::atomic<bool> draining{false};
  std::atomic<int64_t> in_flight{0};  // submitted to the backend, outcome not yet handled
  std::atomic<size_t> body_bytes{0};  // charged to the in-flight body budget

  struct SessionEntry {
    std::weak_ptr<Session> weak;
    std::list<Session*>* listed = nullptr;  // `unproven`, `idle` or none
    std::list<Session*>::iterator it;       // its place there, valid while listed
  };
  void Unlist(SessionEntry& entry) REQUIRES(mu) {
    if (entry.listed == nullptr) return;
    entry.listed->erase(entry.it);
    entry.listed = nullptr;
  }

  Mutex mu;
  std::unordered_map<Session*, SessionEntry> sessions GUARDED_BY(mu);
  // The sessions that have not yet delivered a whole request, oldest first (they are
  // accepted on one thread, in order): the candidates to make room at max_connections,
  // so that finding the oldest does not scan every connection.
  std::list<Session*> unproven GUARDED_BY(mu);
  // The proven sessions waiting for their next request with nothing in flight, longest
  // idle first: at the cap, when no unproven one can go, the first of them makes room
  // (so idle keep-alive holders cannot keep new clients out either).
  std::list<Session*> idle GUARDED_BY(mu);
  int running_threads GUARDED_BY(mu) = 0;
  // Stop(): the listener is closed and every accept completion queued before that has run,
  // so no session can be given to a loop any more.
  bool listener_closed GUARDED_BY(mu) = false;
  CondVar cv;  // in_flight reached 0, an io thread exited or the listener closed

  // Owner-thread state (Start/Stop/destructor).
  bool started = false;
  bool stopped = false;
  uint16_t port = 0;
  std::vector<std::thread> threads;

  // Destroyed first (reverse order): handlers still queued in the io_context and the
  // sessions they own die while the members above are intact.
  std::vector<std::unique_ptr<IoLoop>> loops;  // one per io thread
  size_t next_loop = 0;                        // NextLoop()
  std::optional<tcp::acceptor> acceptor;       // on the first loop
  std::optional<asio::steady_timer> accept_timer;
  // Parses large bodies off the io threads (one thread: huge requests queue behind each
  // other, not in front of small ones).
  std::optional<asio::thread_pool> parse_pool;
};

namespace http_server_internal {

// One connection: read a request, answer it (possibly after the backend), repeat.
// All members are touched only on the connection's io thread (its loop's).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(SessionSocket&& socket, HttpServer::Impl* server, IoLoop* loop, bool over_limit = false)
      : stream_(std::move(socket)), server_(server), loop_(loop), over_limit_(over_limit) {
    if (server_->options.tls.enabled()) {
      tls_context_ = server_->CurrentTls();
      tls_ = std::make_unique<TlsStream>(stream_, *tls_context_);
    }
    server_->metrics.ConnectionOpened();
    since_ns_.store(std::max<int64_t>(1, Clock::now().time_since_epoch().count()),
                    std::memory_order_relaxed);
  }
  ~Session() {
    if (charged_ > 0) server_->ReleaseBody(charged_);
    server_->metrics.ConnectionClosed();
    server_->Unregister(this);
  }

  void Start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (self->tls_) return self->Handshake();
      self->Begin();
    });
  }

  // While it may be evicted: when it opened (steady clock) until it has delivered a whole
  // request, then when it began waiting idle for the next; 0 while neither, kEvicting once
  // chosen to make room. Read under the server's mutex by StartSession (the session is
  // alive then).
  static constexpr int64_t kEvicting = -1;
  int64_t evictable_since() const { return since_ns_.load(std::memory_order_relaxed); }
  // Chooses it to make room, if it is still evictable (`since` as read).
  bool ClaimForEviction(int64_t since) {
    return since_ns_.compare_exchange_strong(since, kEvicting, std::memory_order_relaxed);
  }

  // Over server.max_connections a new connection takes the place of the oldest one that
  // never delivered a whole request (idle or slow-loris), else of the longest-idle
  // keep-alive one: closed here, on its io thread, unless an unproven one completed a
  // request since it was claimed (an idle one whose next request raced the claim is
  // closed when its bytes arrive: DoRead).
  void Evict() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->evictable_since() != kEvicting || self->state_ == State::kClosed) return;
      self->server_->metrics.ConnectionEvicted();
      self->Close();
    });
  }

  // Stop(): closes the connection unless a request is being served or being read. A
  // request whose bytes have arrived (buffered, or waiting in the socket) is read and
  // answered 503, within kDrainReadTimeout, rather than cut off without a response; one
  // still unfinished then is answered 503 too (DrainCut).
  void CloseIfIdle() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->state_ == State::kLingering) return self->Close();
      if (self->state_ != State::kReading) return;
      char byte;
      const ssize_t n =
          ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      // A fresh connection is about to send its first request (a client may send right
      // after connecting): it gets the same short while. An idle keep-alive connection
      // is closed at once (a client retries those, RFC 9112 9.3.1).
      if (self->buffer_.size() > 0 || n > 0 || self->answered_ == 0) {
        self->read_cap_ = std::min(self->read_cap_, Clock::now() + kDrainReadTimeout);
        self->ArmDrainCut();
        return;
      }
      self->Close();
    });
  }

  // The backend's answer, on the session's io thread (Impl::DrainOutbox).
  void OnOutcome(InferOutcome outcome) {
    if (state_ == State::kBackend && watching_) {
      beast::error_code ec;
      stream_.socket().cancel(ec);  // the disconnect watch: the only operation pending
    }
    watching_ = false;
    if (state_ != State::kClosed) Write(server_->handler->RenderOutcome(call_, outcome));
    server_->InferDone();
  }

  // WatchLater's look at the session: its disconnect watch starts if its request has been
  // at the backend since `due` or before. False once it is off the watch list (answered,
  // closed or now watched); true while its request is too recent (it stays listed).
  bool WatchIfDue(std::chrono::steady_clock::time_point due) {
    if (state_ == State::kBackend && backend_since_ > due) return true;
    watch_listed_ = false;
    if (state_ == State::kBackend) WatchForDisconnect();
    return false;
  }

  // The loop's idle timer chose it (OnIdleTimer, on its io thread, claimed as for an
  // eviction): closed while it still waits for its next request.
  void ExpireIdle() {
    if (state_ == State::kReading) Close();
  }
  IoLoop* loop() const { return loop_; }

 private:
  // kParsing: a large body is being parsed on the parse pool (no operation pending).
  enum class State { kReading, kParsing, kBackend, kWriting, kLingering, kClosed };
  using Clock = std::chrono::steady_clock;

  // Read deadlines never extend past the cap Stop() sets (kDrainReadTimeout), plus the
  // slack that lets the drain timer cut the read first.
  void ReadDeadline(Clock::time_point when) {
    if (read_cap_ != Clock::time_point::max()) when = std::min(when, read_cap_ + kDrainCutSlack);
    stream_.expires_at(when);
  }

  // Stop(): at read_cap_ the read still pending is cancelled (Beast 1.74 keeps the
  // deadline a pending read started with, whatever expires_at says later) and OnReadError
  // answers it 503.
  void ArmDrainCut() {
    if (drain_armed_) return;
    if (!drain_timer_) drain_timer_.emplace(stream_.get_executor());
    drain_armed_ = true;
    drain_timer_->expires_at(read_cap_);  // cancels a wait left from an earlier read
    drain_timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;  // disarmed (or re-armed: the newer wait decides)
      self->drain_armed_ = false;
      if (self->state_ != State::kReading) return;
      self->drain_cut_ = true;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
  }
  void DisarmDrainCut() {
    if (!drain_armed_) return;
    drain_armed_ = false;
    drain_timer_->cancel();
  }
  // The peer has sent part of a request.
  bool RequestStarted() const { return buffer_.size() > 0 || (parser_ && parser_->got_some()); }

  // HTTPS: the TLS handshake first, within header_timeout. A plain-HTTP client, one without
  // the certificate a client CA asks for, or one that does not trust ours fails it: closed.
  void Handshake() {
    stream_.expires_after(server_->options.header_timeout);
    tls_->async_handshake(asio::ssl::stream_base::server,
                          [self = shared_from_this()](beast::error_code ec) {
                            if (self->state_ == State::kClosed) return;
                            if (ec) {
                              self->server_->metrics.TlsHandshakeFailed();
                              return self->Close();
                            }
                            self->Begin();
                          });
  }

  // Runs `op` on the stream requests travel on: the TLS stream or the plain one. One
  // branch per operation; the plain path's code is as before.
  template <typename Op>
  void WithStream(Op&& op) {
    if (tls_) {
      op(*tls_);
    } else {
      op(stream_);
    }
  }

  // The first request (or, over server.max_connections, the 503 that closes it).
  void Begin() {
    if (!over_limit_) return DoRead();
    keep_alive_ = false;
    linger_ = true;  // drain what it sends
    Write({503,
           ErrorJson("too many open connections (limit " +
                     std::to_string(server_->options.max_connections) + "); retry later"),
           "application/json", nullptr, "1"});
  }

  void DoRead() {
    state_ = State::kReading;
    head_ = false;
    ReleaseCharge();  // of a request answered without being routed (400, 503)
    parser_.emplace();
    parser_->body_limit(server_->options.max_body_bytes);
    parser_->header_limit(kHeaderLimit);
    body_received_ = 0;
    // Stopping: a connection accepted late gets a short while to send its request.
    if (server_->draining.load()) {
      read_cap_ = std::min(read_cap_, Clock::now() + kDrainReadTimeout);
      ArmDrainCut();
    }
    if (answered_ == 0 || buffer_.size() > 0) return ReadHeader();
    // Keep-alive: the next request may come within idle_timeout; its header then has
    // header_timeout from its first byte. Meanwhile the connection is evictable.
    const auto now = Clock::now();
    ReadDeadline(now + server_->options.idle_timeout);
    since_ns_.store(std::max<int64_t>(1, now.time_since_epoch().count()),
                    std::memory_order_relaxed);
    server_->Idle(this);
    server_->ArmIdleTimer(*loop_, now + server_->options.idle_timeout);
    auto on_bytes = [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (self->state_ == State::kClosed) return;
      // Chosen to make room before its next request came: the new connection was let in
      // in its place, so it goes (a client retries a request that raced the close of
      // an idle connection, RFC 9112 9.3.1).
      if (self->since_ns_.exchange(0, std::memory_order_relaxed) == kEvicting) {
        self->server_->metrics.ConnectionEvicted();
        return self->Close();
      }
      self->server_->Proven(self.get());
      if (ec) return self->Close();  // peer closed, Stop(), (TLS) idle limit
      self->buffer_.commit(n);
      self->ReadHeader();
    };
    if (tls_) {
      ReadDeadline(now + server_->options.idle_timeout);
      tls_->async_read_some(buffer_.prepare(kIdleReadBytes), std::move(on_bytes));
    } else {
      // On the socket, without the stream's deadline: the loop's idle timer closes it.
      stream_.socket().async_read_some(buffer_.prepare(kIdleReadBytes), std::move(on_bytes));
    }
  }

  void ReadHeader() {
    // A header already buffered (the idle read's bytes, a pipelined request) is parsed here:
    // Beast's async_read_header posts the completion of a read that needed no I/O, a turn
    // of the io loop and an epoll_wait of its own per request (issue 38).
    if (buffer_.size() > 0) {
      beast::error_code ec;
      const size_t n = parser_->put(buffer_.data(), ec);
      buffer_.consume(n);
      if (ec != http::error::need_more) return OnHeader(ec, n);
    }
    ReadDeadline(Clock::now() + server_->options.header_timeout);
    WithStream([this](auto& stream) {
      http::async_read_header(stream, buffer_, *parser_,
                              beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
    });
  }

  // 503 before the body is read: the in-flight body budget is spent.
  void RefuseBusy() {
    version_ = parser_->get().version();
    keep_alive_ = false;
    linger_ = !parser_->is_done();  // the peer may still be sending the body
    Write({503,
           ErrorJson("server busy: too many request bodies in flight (limit " +
                     std::to_string(server_->options.max_inflight_body_bytes) +
                     " bytes); retry later"),
           "application/json", nullptr, "1"});
  }

  bool Charge(size_t bytes) {
    if (!server_->ChargeBody(bytes, charged_)) return false;
    charged_ += bytes;
    return true;
  }
  void ReleaseCharge() {
    if (charged_ == 0) return;
    server_->ReleaseBody(charged_);
    charged_ = 0;
  }

  void OnHeader(beast::error_code ec, size_t /*bytes*/) {
    if (state_ == State::kClosed) return;
    if (ec) return OnReadError(ec);
    // Only the chunked transfer coding is understood; a body in another one (gzip, ...)
    // would be read as if it were plain, so it is refused up front (RFC 9112 6.1: 501).
    beast::string_view te = parser_->get()[http::field::transfer_encoding];
    while (!te.empty() && (te.front() == ' ' || te.front() == '\t')) te.remove_prefix(1);
    while (!te.empty() && (te.back() == ' ' || te.back() == '\t')) te.remove_suffix(1);
    if (!te.empty() && !beast::iequals(te, "chunked")) {
      version_ = parser_->get().version();
      keep_alive_ = false;
      linger_ = true;  // the peer may still be sending the body we will not read
      return Write(
          {501, ErrorJson("transfer coding '" + EchoName(std::string_view(te.data(), te.size())) +
                          "' is not supported (only chunked)")});
    }
    if (parser_->is_done()) return OnRead({}, 0);
    // A declared body is charged before it is read. A chunked one is charged its first
    // ChunkedFirstCharge() now; one that outgrows it must reserve the rest of max_body at
    // once (OnBodySome), so concurrent large uploads are admitted whole or refused early
    // instead of each holding part of the budget and none completing (issue 37).
    const auto length = parser_->content_length();
    if (!Charge(length ? *length : ChunkedFirstCharge())) return RefuseBusy();
    if (!length) parser_->get().body().reserve(charged_);  // no reallocation within it
    const auto expect = parser_->get()[http::field::expect];
    if (beast::iequals(expect, "100-continue")) {
      continue_.emplace(http::status::continue_, parser_->get().version());
      WithStream([this](auto& stream) {
        http::async_write(stream, *continue_,
                          [self = shared_from_this()](beast::error_code e, size_t) {
                            if (e) return self->Close();
                            self->ReadBody();
                          });
      });
      return;
    }
    ReadBody();
  }

  // The body is read piece by piece so that it must keep a minimum rate: it has
  // body_timeout, plus a second per min_body_rate bytes received, since its start.
  void ReadBody() {
    body_start_ = Clock::now();
    ReadBodySome();
  }

  void ReadBodySome() {
    // The body bytes already buffered (usually all of a small request's, read with its
    // header) are parsed here, not through a posted completion (ReadHeader).
    while (buffer_.size() > 0) {
      beast::error_code ec;
      const size_t n = parser_->put(buffer_.data(), ec);
      buffer_.consume(n);
      if (ec == http::error::need_more) {
        if (n == 0) break;  // e.g. a chunk's header cut short: read on
        ec = {};
      }
      if (!ec && n == 0) break;
      if (!TakeBody(ec, n)) return;
    }
    const auto earned = std::chrono::duration<double>(
        static_cast<double>(body_received_) / static_cast<double>(server_->options.min_body_rate));
    ReadDeadline(body_start_ + server_->options.body_timeout +
                 std::chrono::duration_cast<Clock::duration>(earned));
    WithStream([this](auto& stream) {
      http::async_read_some(stream, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnBodySome, shared_from_this()));
    });
  }

  void OnBodySome(beast::error_code ec, size_t bytes) {
    if (state_ == State::kClosed) return;
    if (TakeBody(ec, bytes)) ReadBodySome();
  }

  // What a read of the body brought: false when the request is done with here (read
  // whole, refused or failed), true when more of the body is to be read.
  bool TakeBody(beast::error_code ec, size_t bytes) {
    if (ec) {
      OnReadError(ec);
      return false;
    }
    body_received_ += bytes;
    // A chunked body beyond its first charge: the rest of max_body, all or nothing. (The
    // bytes read include the chunk framing; the parser holds the decoded body to max_body.)
    const size_t whole = server_->options.max_body_bytes;
    if (!parser_->content_length() && body_received_ > charged_ && charged_ < whole) {
      if (!Charge(whole - charged_)) {
        RefuseBusy();
        return false;
      }
      // Its string reserved at once too, as Beast does for a declared length: grown by
      // doubling, a body took up to twice its size and left the freed steps in the heap
      // (16 MiB uploads held ~100 MiB afterwards; OverloadE2eTest).
      parser_->get().body().reserve(whole);
    }
    if (parser_->is_done()) {
      OnRead({}, 0);
      return false;
    }
    return true;
  }

  void OnReadError(beast::error_code ec) {
    if (ec == beast::error::timeout && state_ == State::kReading) {
      server_->metrics.ReadTimedOut();  // a slow client (or an idle one at Stop())
    }
    // Cut at Stop()'s drain point: a request under way is answered, not dropped.
    if (drain_cut_ && ec == asio::error::operation_aborted) {
      if (!RequestStarted()) return Close();
      version_ = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
      keep_alive_ = false;
      linger_ = true;  // the rest of the request may still be on its way
      return Write({503, ErrorJson("server is shutting down"), "application/json", nullptr, "1"});
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec.category() != beast::http::make_error_code(http::error::bad_target).category()) {
      return Close();  // peer closed, timeout, reset, cancelled by Stop()
    }
    version_ = 11;
    keep_alive_ = false;
    linger_ = true;  // the peer may still be sending what we did not read
    if (ec == http::error::body_limit) {
      return Write({413, ErrorJson("request body exceeds the limit of " +
                                   std::to_string(server_->options.max_body_bytes) + " bytes")});
    }
    if (ec == http::error::header_limit) {
      return Write({431, ErrorJson("request header fields too large")});
    }
    return Write({400, ErrorJson("malformed HTTP request: " + ec.message())});
  }

  void OnRead(beast::error_code ec, size_t /*bytes*/) {
    if (state_ == State::kClosed) return;
    if (ec) return OnReadError(ec);
    DisarmDrainCut();
    // A whole request: no longer evictable.
    if (since_ns_.exchange(0, std::memory_order_relaxed) != 0) server_->Proven(this);
    auto& req = parser_->get();
    version_ = req.version();
    keep_alive_ = req.keep_alive();
    linger_ = false;
    if (server_->draining.load()) {
      keep_alive_ = false;
      return Write({503, ErrorJson("server is shutting down"), "application/json", nullptr, "1"});
    }
    head_ = req.method() == http::verb::head;
    const HttpMethod method = req.method() == http::verb::get    ? HttpMethod::kGet
                              : req.method() == http::verb::post ? HttpMethod::kPost
                              : head_                            ? HttpMethod::kHead
                                                                 : HttpMethod::kOther;
    if (method == HttpMethod::kPost && !req.body().empty()) {
      // Bounded parse: the document's shape is checked and its tree charged first, and the
      // tensors copied out of binary data after the JSON (the binary tensor extension), so
      // the budget bounds what a request holds while it is parsed, not only its body.
      const std::string_view json = JsonPart(req);
      StatusOr<JsonShape> shape = ScanJsonShape(json, JsonLimits{});
      if (!shape.ok()) return Write({400, ErrorJson("request body: " + shape.status().message())});
      if (!Charge(EstimatedTreeBytes(*shape) + (req.body().size() - json.size())))
        return RefuseBusy();
    }
    if (req.body().size() >= server_->options.offload_parse_bytes) {
      state_ = State::kParsing;
      asio::post(*server_->parse_pool, [self = shared_from_this(), method,
                                        work = asio::make_work_guard(stream_.get_executor())] {
        auto routed = self->RouteRequest(method);
        asio::post(self->stream_.get_executor(),
                   [s = self, r = std::move(routed)]() mutable { s->OnRouted(std::move(r)); });
      });
      return;
    }
    OnRouted(RouteRequest(method));
  }

  // The JSON document of a POST body: all of it, or its first Inference-Header-Content-
  // Length bytes (the binary tensor extension appends raw tensor data after it).
  static std::string_view JsonPart(const http::request<http::string_body>& req) {
    std::string_view body = req.body();
    const auto header = req["Inference-Header-Content-Length"];
    if (const std::optional<uint64_t> length =
            ParseUnsigned(std::string_view(header.data(), header.size()));
        length && *length <= body.size()) {
      body = body.substr(0, *length);
    }
    return body;
  }

  Routed RouteRequest(HttpMethod method) {
    const auto& req = parser_->get();
    const auto target = req.target();
    // Two different lengths of the JSON part: which one the client meant is unknowable (as
    // with Content-Length, which the HTTP parser refuses alike).
    const auto [first, end] = req.equal_range("Inference-Header-Content-Length");
    beast::string_view json_length;
    if (first != end) {
      json_length = first->value();
      for (auto it = std::next(first); it != end; ++it) {
        if (it->value() != json_length) {
          return HttpResponse{
              400, ErrorJson(
                       "conflicting Inference-Header-Content-Length headers ('" +
                       EchoName(std::string_view(json_length.data(), json_length.size())) + "', '" +
                       EchoName(std::string_view(it->value().data(), it->value().size())) + "')")};
        }
      }
    }
    // Looked up only when a token is configured: no extra header search per request else.
    const auto authorization = server_->handler->reads_authorization()
                                   ? req[http::field::authorization]
                                   : beast::string_view();
    return server_->handler->Route(method, std::string_view(target.data(), target.size()),
                                   req.body(),
                                   std::string_view(json_length.data(), json_length.size()),
                                   std::string_view(authorization.data(), authorization.size()));
  }

  void OnRouted(Routed routed) {
    // The body and its parse tree are gone: what the request needs is in `routed`.
    parser_.reset();
    ReleaseCharge();
    if (state_ == State::kClosed) return;
    if (auto* response = std::get_if<HttpResponse>(&routed)) return Write(std::move(*response));
    if (auto* repository = std::get_if<RepositoryCall>(&routed)) {
      return SubmitRepository(std::move(*repository));
    }

    call_ = std::move(std::get<InferCall>(routed));
    state_ = State::kBackend;
    server_->in_flight.fetch_add(1);
    server_->metrics.InferStarted();
    // The backend takes the input tensors (moved, not copied); the call keeps the rest to
    // render the answer.
    TensorSet inputs = std::move(call_.request.inputs);
    call_.request.inputs.clear();
    InferRequest request = call_.request;
    request.inputs = std::move(inputs);
    // The flag of the previous request is reused once nothing else holds it (its
    // client had not gone, or this connection would be closed).
    if (client_gone_ != nullptr && client_gone_.use_count() == 1) {
      std::atomic_thread_fence(std::memory_order_acquire);  // the backend's last reads
      client_gone_->store(false);
    } else {
      client_gone_ = std::make_shared<std::atomic<bool>>(false);
    }
    request.client_gone = client_gone_;
    backend_since_ = Clock::now();
    // The callback hands its only reference to the posted handler, so nothing of this
    // session outlives the handler however long the backend keeps the std::function.
    server_->SubmitSoon(
        *loop_, {std::move(request), [self = shared_from_this()](InferOutcome outcome) mutable {
                   HttpServer::Impl* server = self->server_;
                   IoLoop* loop = self->loop_;
                   server->Deliver(*loop, std::move(self), std::move(outcome));
                 }});
    if (!watch_listed_) {
      watch_listed_ = true;
      server_->WatchLater(*loop_, shared_from_this());
    }
  }

  // A model load or unload: answered when the backend has done it (counted in flight, so
  // Stop() waits for it like for an inference).
  void SubmitRepository(RepositoryCall call) {
    state_ = State::kBackend;
    server_->in_flight.fetch_add(1);
    server_->backend->SetModelLoaded(
        call.model, call.load, [self = shared_from_this(), call](Status status) mutable {
          OnIoThread(std::move(self),
                     [c = std::move(call), st = std::move(status)](Session& s) mutable {
                       if (s.state_ != State::kClosed)
                         s.Write(s.server_->handler->RenderRepository(c, st));
                       // Not an inference: the in-flight gauge never counted it.
                       s.server_->LeaveInFlight();
                     });
        });
  }

  // Runs `fn` on the session's io thread, called from a backend thread. This thread counts
  // as in flight until post() has returned and its copy of the executor is gone, so Stop()
  // cannot destroy the io_context while this thread still touches it.
  template <typename Fn>
  static void OnIoThread(std::shared_ptr<Session> self, Fn fn) {
    HttpServer::Impl* server = self->server_;
    server->in_flight.fetch_add(1);
    {
      auto executor = self->stream_.get_executor();
      asio::post(executor, [s = std::move(self), f = std::move(fn)]() mutable { f(*s); });
    }
    server->LeaveInFlight();
  }

  // While the backend has the request, a readable socket with nothing to read means the
  // client closed: the backend is told, so a queued request is dropped instead of run
  // for nobody (docs/admission.md). Pipelined bytes stop the watch (read after the answer).
  void WatchForDisconnect() {
    watching_ = true;
    stream_.socket().async_wait(
        tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
          if (ec || self->state_ != State::kBackend) return;
          char byte;
          const ssize_t n =
              ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) return;
          self->client_gone_->store(true);
          self->server_->backend->ClientGone();
        });
  }

  void Write(HttpResponse response) {
    server_->metrics.RecordResponse(response.status);
    // The head is rendered by hand into a buffer the connection keeps (Beast's fields and
    // serializer allocated per header and per write): the same fields in the same order.
    res_head_.clear();
    res_head_ += version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    AppendNumber(res_head_, static_cast<size_t>(response.status));
    res_head_ += ' ';
    const auto reason = http::obsolete_reason(static_cast<http::status>(response.status));
    res_head_.append(reason.data(), reason.size());
    // Stopping: the client is told not to send another request on this connection.
    if (server_->draining.load()) keep_alive_ = false;
    res_head_ += "\r\nServer: sloserve\r\nContent-Type: ";
    res_head_ += response.content_type;
    if (response.allow != nullptr) (res_head_ += "\r\nAllow: ") += response.allow;
    if (response.retry_after != nullptr) (res_head_ += "\r\nRetry-After: ") += response.retry_after;
    if (response.www_authenticate != nullptr)
      (res_head_ += "\r\nWWW-Authenticate: ") += response.www_authenticate;
    if (response.inference_header_length > 0) {
      res_head_ += "\r\nInference-Header-Content-Length: ";
      AppendNumber(res_head_, response.inference_header_length);
    }
    // HTTP/1.1 is persistent unless told; HTTP/1.0 only when told.
    if (version_ != 10 && !keep_alive_) res_head_ += "\r\nConnection: close";
    if (version_ == 10 && keep_alive_) res_head_ += "\r\nConnection: keep-alive";
    res_head_ += "\r\nContent-Length: ";
    AppendNumber(res_head_, response.body.size());
    res_head_ += "\r\n\r\n";
    res_body_ = std::move(response.body);
    if (head_) res_body_.clear();  // HEAD: the GET's headers (Content-Length too), no body
    state_ = State::kWriting;
    if (!tls_ && sync_writes_ < kMaxSyncWrites) {
      // Most answers fit the socket's send buffer: written now, without the completion Asio
      // posts even for a write that finished at once (each post is a turn of the io loop and
      // an epoll_wait of its own, issue 38), then on to the next request. Bounded in depth:
      // requests pipelined in the buffer would otherwise nest here one per answer.
      beast::error_code wec;
      auto& sock = stream_.socket();
      if (!sock.non_blocking()) sock.non_blocking(true, wec);
      const size_t n =
          wec ? 0
              : sock.write_some(std::array{asio::buffer(res_head_), asio::buffer(res_body_)}, wec);
      if (!wec && n == res_head_.size() + res_body_.size()) {
        const auto self = shared_from_this();
        ++sync_writes_;
        OnWrite({}, n);
        --sync_writes_;
        return;
      }
      if (wec && wec != asio::error::would_block && wec != asio::error::try_again) return Close();
      // Partly written (or the buffer is full): the rest the usual way.
      if (n < res_head_.size()) {
        res_head_.erase(0, n);
      } else {
        res_body_.erase(0, n - res_head_.size());
        res_head_.clear();
      }
    }
    stream_.expires_after(server_->options.write_timeout);
    WithStream([this](auto& stream) {
      asio::async_write(stream, std::array{asio::buffer(res_head_), asio::buffer(res_body_)},
                        beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
    });
  }

  static void AppendNumber(std::string& out, size_t n) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    out.append(digits, end);
  }

  void OnWrite(beast::error_code ec, size_t /*bytes*/) {
    if (ec) return Close();
    ++answered_;
    if (linger_) return Linger();
    // A response that promised keep-alive (written as Stop() began) gets the drain's short
    // read window for a request the client may already have sent (DoRead caps it).
    if (!keep_alive_) return Close();
    DoRead();
  }

  // After an error answered before the request was fully read: half-close, then read
  // and discard until the peer closes (bounded), so it sees our response, not a reset.
  void Linger() {
    state_ = State::kLingering;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(kLingerTimeout);
    DoLingerRead();
  }

  void DoLingerRead() {
    buffer_.clear();
    WithStream([this](auto& stream) {
      stream.async_read_some(buffer_.prepare(16 * 1024),
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               if (ec || self->state_ == State::kClosed) return self->Close();
                               self->DoLingerRead();
                             });
    });
  }

  void Close() {
    if (state_ == State::kClosed) return;
    state_ = State::kClosed;
    ReleaseCharge();
    DisarmDrainCut();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::basic_stream<tcp, IoExecutor> stream_;
  std::shared_ptr<asio::ssl::context> tls_context_;  // HTTPS: what tls_ was made with
  std::unique_ptr<TlsStream> tls_;                   // HTTPS: over stream_; null for plain HTTP
  HttpServer::Impl* const server_;
  IoLoop* const loop_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::string res_head_;  // the response being written: status line and fields
  std::string res_body_;
  InferCall call_;
  std::shared_ptr<std::atomic<bool>> client_gone_;  // of the request with the backend
  Clock::time_point backend_since_{};               // when it went to the backend
  bool watch_listed_ = false;                       // in its loop's watch_later
  bool watching_ = false;                           // the disconnect watch is armed
  State state_ = State::kReading;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool linger_ = false;
  bool head_ = false;                       // the request being answered is a HEAD
  int64_t answered_ = 0;                    // responses written on this connection
  static constexpr int kMaxSyncWrites = 4;  // answers written in place, nested (Write)
  int sync_writes_ = 0;
  // A chunked body's first charge (its size is unknown until its last chunk): small, so
  // many uploads can start before some must reserve the whole of max_body.
  size_t ChunkedFirstCharge() const {
    const HttpServer::Options& o = server_->options;
    return std::min({size_t{1} << 20, o.max_inflight_body_bytes / 64, o.max_body_bytes});
  }
  size_t charged_ = 0;  // bytes this connection holds of the in-flight body budget
  size_t body_received_ = 0;
  Clock::time_point body_start_{};
  Clock::time_point read_cap_ = Clock::time_point::max();
  std::optional<LoopTimer> drain_timer_;  // ArmDrainCut
  bool drain_armed_ = false;              // its wait is pending
  bool drain_cut_ = false;                // the drain timer cancelled the read
  const bool over_limit_;
  std::atomic<int64_t> since_ns_{0};  // evictable_since()
};

}  // namespace http_server_internal

namespace {

// Makes a listening socket drop every incoming SYN (a classic BPF filter on the TCP
// header, which a TCP socket's filter sees at offset 0), so the kernel starts no new
// handshakes for it: clients connecting from now on see no answer to their SYN and then a
// refusal once the socket is closed, instead of a completed connection that close() would
// reset. Everything else passes: a handshake already answered with a SYN-ACK (its client
// connected, and may have sent its request) completes and is accepted (dropping its final
// ACK too, as a drop-all filter did, left that client with a request written and then a
// reset). Returns false where filters are not available (the drain is then best effort).
bool SealListener(int fd) {
#ifdef __linux__
  constexpr uint32_t kTcpFlags = 13, kSyn = 0x02, kAck = 0x10;
  sock_filter drop_syn[] = {
      {BPF_LD | BPF_B | BPF_ABS, 0, 0, kTcpFlags},
      {BPF_ALU | BPF_AND | BPF_K, 0, 0, kSyn | kAck},
      {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, kSyn},  // a SYN without ACK: a new handshake
      {BPF_RET | BPF_K, 0, 0, 0},
      {BPF_RET | BPF_K, 0, 0, 0xffffffffu},
  };
  sock_fprog program{static_cast<unsigned short>(std::size(drop_syn)), drop_syn};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0;
#else
  (void)fd;
  return false;
#endif
}

}  // namespace

thread_local const IoLoop* HttpServer::Impl::submitting_loop = nullptr;

void HttpServer::Impl::Deliver(IoLoop& loop, std::shared_ptr<Session> session,
                               InferOutcome outcome) {
  bool first;
  {
    MutexLock lock(loop.outbox_mu);
    first = loop.outbox.empty();
    loop.outbox.emplace_back(std::move(session), std::move(outcome));
  }
  // The drain woken with the first of the burst takes it, or the one SubmitBatch runs
  // when it is the thread submitting: an inline step answered (a wake-up would be a turn
  // of the loop that finds the outbox empty: issue 38).
  if (!first || submitting_loop == &loop) return;
  // Counted in flight until the wake-up is written, so Stop() cannot destroy the loop
  // while this thread still touches it (the answer may be written and its request leave
  // in flight before then).
  in_flight.fetch_add(1);
  const uint64_t one = 1;
  if (::write(loop.wake.fd, &one, sizeof one) < 0) {
    // Only at a counter of 2^64 - 2 (EAGAIN), which reads keep from: post instead.
    asio::post(loop.ioc, [this, &loop] { DrainOutbox(loop); });
  }
  LeaveInFlight();
}

template <class OnRead>
Status HttpServer::Impl::Open(LoopCounter& counter, int fd, const char* what, OnRead on_read) {
  if (fd < 0) {
    return UnavailableError(std::string("HttpServer: ") + what + ": " + std::strerror(errno));
  }
  beast::error_code ec;
  if (counter.descriptor.assign(fd, ec); ec) {
    ::close(fd);
    return UnavailableError(std::string("HttpServer: ") + what + ": " + ec.message());
  }
  counter.fd = fd;
  WaitOn(counter, std::move(on_read));
  return OkStatus();
}

template <class OnRead>
void HttpServer::Impl::WaitOn(LoopCounter& counter, OnRead on_read) {
  counter.descriptor.async_wait(asio::posix::descriptor_base::wait_read,
                                [this, &counter, on_read](beast::error_code ec) {
                                  if (ec) return;  // Stop()
                                  // Armed again before the count is read: Asio registers
                                  // descriptors edge-triggered, so an event from then on
                                  // must find a wait pending.
                                  if (!counter.stopped) WaitOn(counter, on_read);
                                  uint64_t count = 0;
                                  if (::read(counter.fd, &count, sizeof count) != sizeof count) {
                                    count = 0;
                                  }
                                  on_read(count);
                                });
}

void HttpServer::Impl::DrainOutbox(IoLoop& loop) {
  auto& answers = loop.outbox_spare;  // empty, with the capacity of an earlier burst
  {
    MutexLock lock(loop.outbox_mu);
    answers.swap(loop.outbox);
  }
  for (auto& [session, outcome] : answers) session->OnOutcome(std::move(outcome));
  answers.clear();
  DisarmWatchIfIdle(loop);
}

void HttpServer::Impl::OnIdleTimer(IoLoop& loop, beast::error_code ec) {
  loop.idle_timer_pending = false;
  if (ec || draining.load()) return;  // cancelled by Stop(), which closes idle ones itself
  const int64_t limit =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options.idle_timeout).count();
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::vector<std::shared_ptr<Session>> expired;
  int64_t next = 0;  // when the first connection still idle expires; 0: none is
  {
    MutexLock lock(mu);
    // `idle` is ordered by when each began waiting: the walk ends at the first that has
    // not waited idle_timeout. Other loops' connections are left to their own timers.
    for (auto it = idle.begin(); it != idle.end();) {
      Session* session = *it++;  // before Claim unlists it
      const int64_t since = session->evictable_since();
      if (since <= 0) continue;  // being claimed, or proven a moment ago
      if (since + limit > now) {
        next = since + limit;
        break;
      }
      if (session->loop() != &loop) continue;
      if (std::shared_ptr<Session> claimed = Claim(session, since)) {
        expired.push_back(std::move(claimed));
      }
    }
  }
  for (auto& session : expired) session->ExpireIdle();
  if (next != 0) {
    ArmIdleTimer(loop, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(next)));
  }
}

void HttpServer::Impl::WatchLater(IoLoop& loop, std::shared_ptr<Session> session) {
  // The timer is armed after the request went to the backend (SubmitBatch), if unanswered.
  loop.watch_later.push_back(std::move(session));
}

namespace {
// Sets (or, with zero, disarms) a timerfd to expire once `after` from now.
void SetTimerFd(int fd, std::chrono::nanoseconds after) {
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(after.count() / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(after.count() % 1'000'000'000);
  ::timerfd_settime(fd, 0, &spec, nullptr);
}
}  // namespace

void HttpServer::Impl::ArmWatchTimer(IoLoop& loop) {
  if (loop.watch_armed) return;
  loop.watch_armed = true;
  SetTimerFd(loop.watch.fd, http_server_internal::kWatchDelay);
}

void HttpServer::Impl::OnWatchTimer(IoLoop& loop) {
  loop.watch_armed = false;
  PruneWatchList(loop, std::chrono::steady_clock::now() - http_server_internal::kWatchDelay);
  if (!loop.watch_later.empty()) ArmWatchTimer(loop);
}

void HttpServer::Impl::DisarmWatchIfIdle(IoLoop& loop) {
  constexpr size_t kFew = 16;  // the walk is cheap, but under load it would be per burst
  if (!loop.watch_armed || loop.watch_later.size() > kFew) return;
  PruneWatchList(loop, std::chrono::steady_clock::time_point::min());  // drops the answered
  if (!loop.watch_later.empty()) return;
  loop.watch_armed = false;
  SetTimerFd(loop.watch.fd, std::chrono::nanoseconds(0));
}

void HttpServer::Impl::PruneWatchList(IoLoop& loop, std::chrono::steady_clock::time_point due) {
  auto& listed = loop.watch_later;
  size_t kept = 0;
  for (size_t i = 0; i < listed.size(); ++i) {
    if (!listed[i]->WatchIfDue(due)) continue;
    if (kept != i) listed[kept] = std::move(listed[i]);
    ++kept;
  }
  listed.erase(listed.begin() + static_cast<std::ptrdiff_t>(kept), listed.end());
}

void HttpServer::Impl::OnAccept(beast::error_code ec, SessionSocket sock, IoLoop* loop) {
  if (ec) {
    if (draining.load() || !acceptor->is_open()) return;
    // e.g. out of file descriptors: retry shortly instead of spinning
    accept_timer->expires_after(kAcceptRetryDelay);
    accept_timer->async_wait([this](beast::error_code e) {
      if (!e && !draining.load()) DoAccept();
    });
    return;
  }
  // Accepted while stopping too: its request is read and answered 503, not reset.
  StartSession(std::move(sock), loop);
  if (!draining.load() && acceptor->is_open()) DoAccept();
}

void HttpServer::Impl::DoAccept() {
  // The accepted socket (and so its session) runs on the loop it is accepted into.
  IoLoop* loop = NextLoop();
  acceptor->async_accept(loop->ioc.get_executor(),
                         [this, loop](beast::error_code ec, SessionSocket sock) {
                           OnAccept(ec, std::move(sock), loop);
                         });
}

beast::error_code HttpServer::Impl::AcceptQueued() {
  IoLoop* loop = NextLoop();
  SessionSocket sock(loop->ioc.get_executor());
  beast::error_code ec;
  acceptor->accept(sock, ec);
  if (!ec) StartSession(std::move(sock), loop);
  return ec;
}

void HttpServer::Impl::StartSession(SessionSocket sock, IoLoop* loop) {
  using http_server_internal::Session;
  beast::error_code ec;
  sock.set_option(tcp::no_delay(true), ec);
  std::shared_ptr<Session> session, evicted;
  {
    MutexLock lock(mu);
    bool over_limit = sessions.size() >= options.max_connections;
    if (over_limit) {
      // Fairness at the cap: the oldest connection that never delivered a whole request
      // makes room, else the one idle the longest between requests. A connection with a
      // request being read, at the backend or being answered is never chosen.
      evicted = ClaimFirst(unproven);
      if (evicted == nullptr) evicted = ClaimFirst(idle);
      over_limit = evicted == nullptr;
    }
    session = std::make_shared<Session>(std::move(sock), this, loop, over_limit);
    SessionEntry& entry = sessions[session.get()];
    entry.weak = session;
    entry.it = unproven.insert(unproven.end(), session.get());
    entry.listed = &unproven;
  }
  if (evicted) evicted->Evict();
  session->Start();
}

std::shared_ptr<Session> HttpServer::Impl::ClaimFirst(std::list<Session*>& list) {
  // A session in the map is alive while `mu` is held: its destructor unregisters under
  // `mu` before its members go. Those at the front that stopped being evictable a moment
  // ago (their Proven() waits for `mu`) are passed over.
  for (auto it = list.begin(); it != list.end();) {
    Session* first = *it++;  // before Claim unlists it
    const int64_t since = first->evictable_since();
    if (since <= 0) continue;
    if (std::shared_ptr<Session> claimed = Claim(first, since)) return claimed;
  }
  return nullptr;
}

std::shared_ptr<Session> HttpServer::Impl::Claim(Session* session, int64_t since) {
  if (!session->ClaimForEviction(since)) return nullptr;
  SessionEntry& entry = sessions[session];
  Unlist(entry);
  // Null while its destructor waits for `mu` (it is closing anyway).
  return entry.weak.lock();
}

void HttpServer::Impl::RunIoThread(IoLoop* loop) {
  pthread_setname_np(pthread_self(), "http-io");  // per-thread counts, perf
  for (;;) {
    try {
      loop->ioc.run();
      break;
    } catch (const std::exception& e) {  // a handler threw (e.g. bad_alloc): keep serving
      std::fprintf(stderr, "sloserve http: io thread caught: %s\n", e.what());
    }
  }
  MutexLock lock(mu);
  --running_threads;
  cv.NotifyAll();
}

int HttpServer::DefaultThreads() {
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxDefaultThreads);
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  Stop();
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(Options options,
                                                         InferenceBackend* backend) {
  if (backend == nullptr) return InvalidArgumentError("HttpServer: backend is null");
  if (options.threads < 1 || options.threads > 256) {
    return InvalidArgumentError("HttpServer: threads must be in [1, 256]");
  }
  if (options.max_connections < 1 || options.max_connections > 1'000'000) {
    return InvalidArgumentError("HttpServer: max_connections must be in [1, 1000000]");
  }
  if (options.mmap_threshold_bytes > kMaxMmapThresholdBytes) {
    return InvalidArgumentError("HttpServer: mmap_threshold_bytes must be 0 (off) or at most " +
                                std::to_string(kMaxMmapThresholdBytes) + ", got " +
                                std::to_string(options.mmap_threshold_bytes));
  }
  if (options.max_body_bytes == 0) {
    return InvalidArgumentError("HttpServer: max_body_bytes must be > 0");
  }
  if (options.max_slo <= Duration::zero()) {
    return InvalidArgumentError("HttpServer: max_slo must be > 0");
  }
  if (options.idle_timeout <= Duration::zero() || options.write_timeout <= Duration::zero() ||
      options.header_timeout <= Duration::zero() || options.body_timeout <= Duration::zero()) {
    return InvalidArgumentError("HttpServer: timeouts must be > 0");
  }
  if (options.min_body_rate == 0 || options.max_inflight_body_bytes == 0) {
    return InvalidArgumentError(
        "HttpServer: min_body_rate and max_inflight_body_bytes must be > 0");
  }
  RETURN_IF_ERROR(AccessControl::Validate(options.access));
  RETURN_IF_ERROR(ValidateTlsFiles(options.tls));
  std::unique_ptr<asio::ssl::context> tls;
  if (options.tls.enabled()) {
    ASSIGN_OR_RETURN(tls, MakeServerTlsContext(options.tls));
  }
  auto impl = std::make_unique<Impl>(std::move(options), backend);
  if (tls) impl->metrics.EnableTlsMetrics();
  {
    MutexLock lock(impl->tls_mu);
    impl->tls = std::move(tls);
  }
  impl->handler = std::make_unique<KServeHandler>(
      KServeHandler::Options{impl->options.max_slo, SLOSERVE_VERSION, impl->options.access_log,
                             impl->options.request_metrics, impl->options.access,
                             impl->options.build_revision},
      backend->Tasks(), backend, &impl->metrics);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

StatusOr<uint16_t> HttpServer::Start() {
  Impl& s = *impl_;
  if (s.started) return FailedPreconditionError("HttpServer: already started");
  for (int i = 0; i < s.options.threads; ++i) {
    auto loop = std::make_unique<IoLoop>();
    IoLoop* l = loop.get();
    RETURN_IF_ERROR(s.Open(l->wake, ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), "eventfd",
                           [&s, l](uint64_t) { s.DrainOutbox(*l); }));
    RETURN_IF_ERROR(s.Open(l->watch, ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC),
                           "timerfd", [&s, l](uint64_t fired) {
                             // 0: disarmed or set again since it fired.
                             if (fired > 0) s.OnWatchTimer(*l);
                           }));
    s.loops.push_back(std::move(loop));
  }
  asio::io_context& first = s.loops.front()->ioc;
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  beast::error_code ec;
  tcp::resolver resolver(first);
  const auto results =
      resolver.resolve(s.options.host, std::to_string(s.options.port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return InvalidArgumentError("HttpServer: cannot resolve " + where + ": " + ec.message());
  }
  const tcp::endpoint endpoint = results.begin()->endpoint();
  s.acceptor.emplace(first);
  if (s.acceptor->open(endpoint.protocol(), ec); ec) {
    return UnavailableError("HttpServer: cannot open socket: " + ec.message());
  }
  s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (s.acceptor->bind(endpoint, ec); ec) {
    return UnavailableError("HttpServer: cannot bind " + where + ": " + ec.message());
  }
  if (s.acceptor->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return UnavailableError("HttpServer: cannot listen on " + where + ": " + ec.message());
  }
  s.port = s.acceptor->local_endpoint().port();
  s.accept_timer.emplace(s.acceptor->get_executor());
  s.parse_pool.emplace(1);
  if (s.options.mmap_threshold_bytes > 0) ReturnLargeBlocksToOs(s.options.mmap_threshold_bytes);
  s.started = true;
  s.DoAccept();
  {
    MutexLock lock(s.mu);
    s.running_threads = s.options.threads;
  }
  for (auto& loop : s.loops) {
    s.threads.emplace_back([&s, l = loop.get()] { s.RunIoThread(l); });
  }
  return s.port;
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopped) return;
  s.stopped = true;
  s.draining.store(true);
  asio::post(s.acceptor->get_executor(), [&s] {
    // Connections the kernel has completed but we have not accepted would be reset by
    // close(): stop the kernel completing new ones, then accept what is queued, so every
    // client whose connect() succeeded has its request read and answered 503.
    const bool sealed = SealListener(s.acceptor->native_handle());
    for (int pass = 0; pass < 3; ++pass) {
      beast::error_code ec;
      s.acceptor->non_blocking(true, ec);
      for (int i = 0; i < 4096 && !ec; ++i) ec = s.AcceptQueued();
      // A handshake answered before the seal completes when its client's ACK is processed
      // (microseconds, or longer when the kernel defers loopback packets under load):
      // look again after a moment, and after a longer one.
      if (!sealed || pass == 2) break;
      std::this_thread::sleep_for(http_server_internal::kSealSettle * (pass == 0 ? 1 : 10));
    }
    beast::error_code ec;
    s.acceptor->close(ec);
    s.accept_timer->cancel();
    // Behind the accept completions queued before the close (the aborted one included).
    asio::post(s.acceptor->get_executor(), [&s] {
      MutexLock lock(s.mu);
      s.listener_closed = true;
      s.cv.NotifyAll();
    });
  });
  std::vector<std::shared_ptr<Session>> live;
  {
    MutexLock lock(s.mu);
    live.reserve(s.sessions.size());
    for (auto& [ptr, entry] : s.sessions) {
      if (auto session = entry.weak.lock()) live.push_back(std::move(session));
    }
  }
  for (auto& session : live) session->CloseIfIdle();
  live.clear();
  // The idle timers would keep their loops running until they fire (no new one is armed
  // once draining is set).
  for (auto& loop : s.loops) {
    asio::post(loop->ioc, [l = loop.get()] { l->idle_timer.cancel(); });
  }
  {
    MutexLock lock(s.mu);
    // Each loop runs while it has work; one without any would end now. So the guards go
    // only once no new connection can be given to a loop (each holds its loop's work).
    s.cv.Wait(s.mu, [&s]() REQUIRES(s.mu) { return s.in_flight.load() == 0 && s.listener_closed; });
  }
  for (auto& loop : s.loops) {
    loop->work.reset();
    // Nothing is in flight, so no answer is handed over and no request watched from here
    // on: the waits on the wake-up and the watch timer go too, as the last work of the
    // loop besides its connections.
    asio::post(loop->ioc, [l = loop.get()] {
      for (LoopCounter* counter : {&l->wake, &l->watch}) {
        counter->stopped = true;  // an event already completed does not arm it again
        beast::error_code ignored;
        counter->descriptor.cancel(ignored);
      }
    });
  }
  {
    MutexLock lock(s.mu);
    if (!s.cv.WaitFor(s.mu, s.options.drain_timeout,
                      [&s]() REQUIRES(s.mu) { return s.running_threads == 0; })) {
      // A client is not reading its last response: give up on it.
      for (auto& loop : s.loops) loop->ioc.stop();
    }
  }
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  s.parse_pool->stop();  // a parse still running finishes; its answer is not written
  s.parse_pool->join();
}

uint16_t HttpServer::port() const {
  return impl_->port;
}

Status HttpServer::ReloadTls() {
  Impl& s = *impl_;
  if (!s.options.tls.enabled()) return FailedPreconditionError("HttpServer: TLS is off");
  ASSIGN_OR_RETURN(std::unique_ptr<asio::ssl::context> fresh, MakeServerTlsContext(s.options.tls));
  std::shared_ptr<asio::ssl::context> next = std::move(fresh);
  MutexLock lock(s.tls_mu);
  s.tls.swap(next);
  return OkStatus();  // the old context goes when its last connection does
}

const ServerMetrics& HttpServer::metrics() const {
  return impl_->metrics;
}

size_t HttpServer::IdleConnections() const {
  MutexLock lock(impl_->mu);
  return impl_->idle.size();
}

}  // namespace sloserve
