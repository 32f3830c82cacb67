#include "sloserve/loadgen/load_generator.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <utility>

#include "sloserve/server/tls_context.h"

namespace sloserve {
namespace loadgen_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr size_t kResponseBodyLimit = size_t{64} << 20;
constexpr int64_t kMaxBodyElements = int64_t{1} << 27;

Duration Since(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<Duration>(to - from);
}

struct Conn {
  explicit Conn(asio::io_context& ioc) : stream(ioc) {}
  beast::tcp_stream stream;
  std::unique_ptr<asio::ssl::stream<beast::tcp_stream&>> tls;  // HTTPS: over `stream`
  beast::flat_buffer buffer;
  std::optional<http::response_parser<http::string_body>> parser;
  size_t current = 0;  // index of the request in flight
  int64_t served = 0;  // responses read on this connection
  // Taken from the idle pool for the request in flight (opened before the clock started,
  // or kept alive after a response): the server may have closed it in the meantime.
  bool was_idle = false;
};
using ConnPtr = std::shared_ptr<Conn>;

// One run; all state is touched only from the thread running ioc_.
class LoadRun {
 public:
  // `bodies` holds one body per distinct request; `body_of[i]` indexes request i's (empty:
  // every request uses bodies[0]).
  // `labels[k]`: the label of bodies[k] (-1 or empty: not labelled).
  LoadRun(const LoadOptions& options, std::vector<Duration> schedule, std::vector<uint32_t> body_of,
          std::vector<std::string> bodies, const LoadProgressFn& progress,
          std::vector<int> labels = {})
      : options_(options),
        labels_(std::move(labels)),
        schedule_(std::move(schedule)),
        body_of_(std::move(body_of)),
        progress_(progress),
        recorder_(static_cast<int64_t>(schedule_.size())),
        send_timer_(ioc_),
        progress_timer_(ioc_),
        retried_(schedule_.size(), false) {
    requests_.resize(bodies.size());
    for (size_t k = 0; k < bodies.size(); ++k) {
      auto& request = requests_[k];
      request.method(http::verb::post);
      request.target("/v2/models/" + options.task + "/infer");
      request.version(11);
      request.set(http::field::host, options.host + ":" + std::to_string(options.port));
      request.set(http::field::content_type, "application/json");
      request.set(http::field::user_agent, "sloserve-loadgen");
      if (!options.token.empty())
        request.set(http::field::authorization, "Bearer " + options.token);
      request.keep_alive(true);
      request.body() = std::move(bodies[k]);
      request.prepare_payload();
    }
  }

  Status Connect() {
    if (options_.tls.enabled()) {
      ASSIGN_OR_RETURN(tls_, MakeClientTlsContextFor(options_.tls, options_.host));
    }
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    endpoints_ = resolver.resolve(options_.host, std::to_string(options_.port), ec);
    const std::string where = options_.host + ":" + std::to_string(options_.port);
    if (ec) return UnavailableError("loadgen: cannot resolve " + where + ": " + ec.message());
    for (int k = 0; k < options_.connections; ++k) {
      ConnPtr c = NewConn();
      c->stream.connect(endpoints_, ec);
      if (!ec && c->tls) c->tls->handshake(asio::ssl::stream_base::client, ec);
      if (ec) {
        if (k == 0)
          return UnavailableError("loadgen: cannot connect to " + where + ": " + ec.message());
        break;  // e.g. the listen backlog is full: the rest open on demand
      }
      c->stream.socket().set_option(tcp::no_delay(true), ec);
      idle_.push_back(std::move(c));
      ++open_;
    }
    peak_ = open_;
    return OkStatus();
  }

  LoadReport Run() {
    start_ = Clock::now();
    last_completion_ = start_;
    if (schedule_.empty()) {
      finished_ = true;
    } else {
      OnTick();
      if (progress_) ArmProgress();
    }
    ioc_.run();
    const Duration span = schedule_.empty() ? Duration::zero() : schedule_.back();
    return recorder_.Finish(static_cast<int64_t>(schedule_.size()), sent_,
                            Since(start_, last_completion_), span, options_.slo_ms, peak_);
  }

 private:
  Clock::time_point Scheduled(size_t i) const { return start_ + schedule_[i]; }

  void OnTick() {
    const auto now = Clock::now();
    while (next_ < schedule_.size() && Scheduled(next_) <= now) Dispatch(next_++);
    if (next_ < schedule_.size()) {
      send_timer_.expires_at(Scheduled(next_));
      send_timer_.async_wait([this](beast::error_code ec) {
        if (!ec) OnTick();
      });
    }
  }

  void Dispatch(size_t i) {
    ++sent_;
    Assign(i, /*retry=*/false);
  }

  // Idle connection, else a new one (up to the cap), else the FIFO (retries go first).
  void Assign(size_t i, bool retry) {
    if (!idle_.empty()) {
      ConnPtr c = std::move(idle_.back());
      idle_.pop_back();
      c->was_idle = true;
      Send(std::move(c), i);
    } else if (open_ < options_.max_connections) {
      Open(i);
    } else if (retry) {
      queue_.push_front(i);
    } else {
      recorder_.RecordConnectionWait();  // every one of max_connections is busy
      ++waited_;
      queue_.push_back(i);
    }
  }

  ConnPtr NewConn() {
    auto c = std::make_shared<Conn>(ioc_);
    if (tls_) {
      c->tls = std::make_unique<asio::ssl::stream<beast::tcp_stream&>>(c->stream, *tls_);
      SetClientServerName(c->tls->native_handle(), options_.host);
    }
    return c;
  }

  // Runs `op` on the stream requests travel on: TLS or plain.
  template <typename Op>
  static void WithStream(Conn& c, Op&& op) {
    if (c.tls) {
      op(*c.tls);
    } else {
      op(c.stream);
    }
  }

  void Open(size_t i) {
    ConnPtr c = NewConn();
    c->current = i;
    ++open_;
    peak_ = std::max(peak_, open_);
    c->stream.expires_after(options_.timeout);
    c->stream.async_connect(endpoints_, [this, c](beast::error_code ec, const tcp::endpoint&) {
      if (ec) return Fail(c, ec);
      c->stream.socket().set_option(tcp::no_delay(true), ec);
      if (!c->tls) return Send(c, c->current);
      c->tls->async_handshake(asio::ssl::stream_base::client, [this, c](beast::error_code e) {
        if (e) return Fail(c, e);
        Send(c, c->current);
      });
    });
  }

  void Send(ConnPtr c, size_t i) {
    c->current = i;
    const auto now = Clock::now();
    if (!retried_[i]) {  // a resend is not a new send: its first lag counted
      const Duration lag = now > Scheduled(i) ? Since(Scheduled(i), now) : Duration::zero();
      recorder_.RecordSendLag(lag);
    }
    c->stream.expires_after(options_.timeout);  // bounds the write and the read
    const auto& request = requests_[body_of_.empty() ? 0 : body_of_[i]];
    WithStream(*c, [&](auto& stream) {
      http::async_write(stream, request, [this, c, &stream](beast::error_code ec, size_t) {
        if (ec) return Fail(c, ec);
        c->parser.emplace();
        c->parser->body_limit(kResponseBodyLimit);
        http::async_read(stream, c->buffer, *c->parser,
                         [this, c](beast::error_code e, size_t) { OnRead(c, e); });
      });
    });
  }

  void OnRead(const ConnPtr& c, beast::error_code ec) {
    if (ec) return Fail(c, ec);
    const auto now = Clock::now();
    last_completion_ = now;
    const auto& res = c->parser->get();
    const int status = static_cast<int>(res.result_int());
    if (status == 200) {
      const size_t k = body_of_.empty() ? 0 : body_of_[c->current];
      RecordOk(res.body(), Since(Scheduled(c->current), now), k < labels_.size() ? labels_[k] : -1);
    } else {
      recorder_.RecordHttpError(status, res.body());
    }
    const bool keep_alive = res.keep_alive();
    ++c->served;
    c->parser.reset();
    if (keep_alive) {
      Release(c);
    } else {
      Drop(c);
    }
    AfterCompletion();
  }

  void RecordOk(const std::string& body, Duration latency, int label) {
    std::string variant;
    std::string hardware;
    bool met_slo = false;
    const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (label >= 0) {
      ++labelled_;
      if (doc.is_object() && ArgmaxOfFirstOutput(doc) == label) ++correct_;
    }
    if (doc.is_object()) {
      if (const auto params = doc.find("parameters"); params != doc.end() && params->is_object()) {
        if (const auto v = params->find("variant"); v != params->end() && v->is_string()) {
          variant = v->get<std::string>();
        }
        if (const auto h = params->find("hardware"); h != params->end() && h->is_string()) {
          hardware = h->get<std::string>();
        }
        if (const auto m = params->find("met_slo"); m != params->end() && m->is_boolean()) {
          met_slo = m->get<bool>();
        }
      }
    }
    recorder_.RecordOk(latency, variant.empty() ? "(unknown)" : variant, met_slo, options_.slo_ms,
                       hardware);
  }

  // The class a response predicts: the index of the largest value of its first output;
  // -1 when it has none.
  static int ArgmaxOfFirstOutput(const nlohmann::json& doc) {
    const auto outputs = doc.find("outputs");
    if (outputs == doc.end() || !outputs->is_array() || outputs->empty()) return -1;
    const auto data = (*outputs)[0].find("data");
    if (data == (*outputs)[0].end() || !data->is_array()) return -1;
    int best = -1;
    double best_value = 0;
    for (size_t i = 0; i < data->size(); ++i) {
      if (!(*data)[i].is_number()) continue;
      const double v = (*data)[i].get<double>();
      if (best < 0 || v > best_value) {
        best = static_cast<int>(i);
        best_value = v;
      }
    }
    return best;
  }

 public:
  int64_t labelled() const { return labelled_; }
  int64_t correct() const { return correct_; }

 private:
  void Fail(const ConnPtr& c, beast::error_code ec) {
    // A connection the server closed while it sat idle (kept alive after a response, or
    // opened ahead and closed by its header timeout): resend once on another connection
    // (latency still counts from the scheduled time).
    const bool stale = (c->was_idle || c->served > 0) && ec != beast::error::timeout &&
                       !retried_[c->current] &&
                       (ec == http::error::end_of_stream || ec == asio::error::eof ||
                        ec == asio::error::connection_reset || ec == asio::error::broken_pipe);
    if (stale) {
      retried_[c->current] = true;
      const size_t i = c->current;
      Drop(c);
      // On a new connection: another idle one may have been closed the same way.
      if (open_ < options_.max_connections) {
        Open(i);
      } else {
        queue_.push_front(i);  // retries go first
      }
      return;
    }
    last_completion_ = Clock::now();
    if (ec == beast::error::timeout) {
      recorder_.RecordTimeout();
    } else {
      recorder_.RecordTransportError();
    }
    Drop(c);
    AfterCompletion();
  }

  // A connection finished a request and stays open: serve the queue or go idle.
  void Release(const ConnPtr& c) {
    if (!queue_.empty()) {
      const size_t i = queue_.front();
      queue_.pop_front();
      Send(c, i);
      return;
    }
    c->stream.expires_never();
    idle_.push_back(c);
  }

  void Drop(const ConnPtr& c) {
    beast::error_code ec;
    c->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    c->stream.close();
    --open_;
    if (!queue_.empty() && open_ < options_.max_connections) {
      const size_t i = queue_.front();
      queue_.pop_front();
      Open(i);
    }
  }

  void AfterCompletion() {
    if (finished_ || recorder_.completed() < static_cast<int64_t>(schedule_.size())) return;
    finished_ = true;
    send_timer_.cancel();
    progress_timer_.cancel();
    for (auto& c : idle_) {
      beast::error_code ec;
      c->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      c->stream.close();
    }
    idle_.clear();
  }

  void ArmProgress() {
    progress_timer_.expires_after(options_.progress_interval);
    progress_timer_.async_wait([this](beast::error_code ec) {
      if (ec || finished_) return;
      LoadProgress p;
      p.elapsed = Since(start_, Clock::now());
      p.scheduled = static_cast<int64_t>(schedule_.size());
      p.sent = sent_;
      p.completed = recorder_.completed();
      p.queued = static_cast<int64_t>(queue_.size());
      p.open_connections = open_;
      p.waited_for_connection = waited_;
      p.send_lag_p99 = recorder_.SendLagP99(static_cast<int64_t>(schedule_.size()));
      progress_(p);
      ArmProgress();
    });
  }

  asio::io_context ioc_;  // first member: outlives every connection
  const LoadOptions& options_;
  const std::vector<int> labels_;  // per body; -1 = not labelled
  int64_t labelled_ = 0;
  int64_t correct_ = 0;
  const std::vector<Duration> schedule_;
  const std::vector<uint32_t> body_of_;  // request i -> index into requests_
  const LoadProgressFn& progress_;
  LoadRecorder recorder_;
  // One prepared request per distinct body, built before the clock starts and written
  // read-only by every send that uses it.
  std::vector<http::request<http::string_body>> requests_;
  tcp::resolver::results_type endpoints_;
  std::unique_ptr<asio::ssl::context> tls_;  // HTTPS (options_.tls); null = plain
  asio::steady_timer send_timer_;
  asio::steady_timer progress_timer_;
  std::vector<ConnPtr> idle_;
  std::deque<size_t> queue_;   // requests waiting for a connection
  std::vector<bool> retried_;  // per request: already resent once after a stale connection
  size_t next_ = 0;            // next request to dispatch
  int64_t sent_ = 0;
  int64_t waited_ = 0;  // requests queued because the connection cap was reached
  int open_ = 0;
  int peak_ = 0;
  bool finished_ = false;
  Clock::time_point start_;
  Clock::time_point last_completion_;
};

const char* ZeroLiteral(const std::string& datatype) {
  if (datatype == "BOOL") return "false";
  if (datatype == "BYTES") return "\"\"";
  if (datatype.starts_with("FP") || datatype == "BF16") return "0.0";
  return "0";
}

// One row of real FP32 data: `options.shape` with shape[0] = 1, `data` its elements.
StatusOr<std::string> BuildDataBody(const LoadOptions& options, const std::vector<float>& data) {
  using nlohmann::json;
  std::vector<int64_t> shape = options.shape;
  if (shape.empty()) shape = {1, static_cast<int64_t>(data.size())};
  shape[0] = 1;
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  if (elements != static_cast<int64_t>(data.size())) {
    return InvalidArgumentError("loadgen: a dataset sample has " + std::to_string(data.size()) +
                                " values but the shape " + json(shape).dump() + " holds " +
                                std::to_string(elements));
  }
  json body = {{"inputs", json::array({{{"name", options.input_name},
                                        {"shape", shape},
                                        {"datatype", "FP32"},
                                        {"data", data}}})}};
  json params = json::object();
  if (options.slo_ms > 0) params["slo_ms"] = options.slo_ms;
  if (!options.app.empty()) params["app"] = options.app;
  if (options.priority > 0) params["priority"] = options.priority;
  if (!params.empty()) body["parameters"] = params;
  return body.dump();
}

}  // namespace loadgen_internal

StatusOr<std::string> BuildInferBody(const LoadOptions& options) {
  if (!options.shape.empty() && options.shape[0] != options.rows) {
    return InvalidArgumentError("loadgen: shape[0] must equal rows");
  }
  return BuildInferBody(options, options.rows);
}

StatusOr<std::string> BuildInferBody(const LoadOptions& options, int32_t rows) {
  using nlohmann::json;
  if (rows < 1) return InvalidArgumentError("loadgen: rows must be >= 1");
  std::vector<int64_t> shape = options.shape;
  if (shape.empty()) shape = {rows};
  shape[0] = rows;
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgumentError("loadgen: shape dimensions must be >= 0");
    if (d != 0 && elements > loadgen_internal::kMaxBodyElements / d) {
      return InvalidArgumentError("loadgen: shape has too many elements");
    }
    elements *= d;
  }
  const char* zero = loadgen_internal::ZeroLiteral(options.datatype);
  std::string body = "{\"inputs\":[{\"name\":" + json(options.input_name).dump() +
                     ",\"shape\":" + json(shape).dump() +
                     ",\"datatype\":" + json(options.datatype).dump() + ",\"data\":[";
  body.reserve(body.size() + static_cast<size_t>(elements) * 4 + 64);
  for (int64_t k = 0; k < elements; ++k) {
    if (k > 0) body += ',';
    body += zero;
  }
  body += "]}]";
  json params = json::object();
  if (options.slo_ms > 0) params["slo_ms"] = options.slo_ms;
  if (!options.app.empty()) params["app"] = options.app;
  if (options.priority > 0) params["priority"] = options.priority;
  if (!params.empty()) body += ",\"parameters\":" + params.dump();
  body += '}';
  return body;
}

StatusOr<LoadReport> RunLoad(const LoadOptions& options, const LoadProgressFn& progress) {
  if (options.task.empty()) return InvalidArgumentError("loadgen: task is empty");
  if (options.connections < 1) return InvalidArgumentError("loadgen: connections must be >= 1");
  if (options.max_connections < options.connections) {
    return InvalidArgumentError("loadgen: max_connections must be >= connections");
  }
  if (options.timeout <= Duration::zero())
    return InvalidArgumentError("loadgen: timeout must be > 0");
  if (progress && options.progress_interval <= Duration::zero()) {
    return InvalidArgumentError("loadgen: progress_interval must be > 0");
  }
  const size_t n = options.schedule.size();
  const bool per_request = !options.request_rows.empty();
  if (per_request && options.request_rows.size() != n) {
    return InvalidArgumentError("loadgen: request_rows must have one entry per schedule entry");
  }
  if (std::any_of(options.schedule.begin(), options.schedule.end(),
                  [](Duration d) { return d < Duration::zero(); })) {
    return InvalidArgumentError("loadgen: schedule offsets must be >= 0");
  }
  // Send order = schedule order; each request keeps its rows.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (!std::is_sorted(options.schedule.begin(), options.schedule.end())) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return options.schedule[a] < options.schedule[b]; });
  }
  std::vector<Duration> schedule(n);
  for (size_t k = 0; k < n; ++k) schedule[k] = options.schedule[order[k]];

  std::vector<std::string> bodies;
  std::vector<uint32_t> body_of;
  std::vector<int> labels;
  double rows_sum = 0;
  if (!options.dataset_inputs.empty()) {
    if (per_request || options.rows != 1) {
      return InvalidArgumentError("loadgen: a dataset sends one row per request (no rows/sizes)");
    }
    if (options.dataset_labels.size() != options.dataset_inputs.size()) {
      return InvalidArgumentError("loadgen: dataset_labels must have one label per input");
    }
    for (size_t d = 0; d < options.dataset_inputs.size(); ++d) {
      ASSIGN_OR_RETURN(std::string body,
                       loadgen_internal::BuildDataBody(options, options.dataset_inputs[d]));
      bodies.push_back(std::move(body));
      labels.push_back(options.dataset_labels[d]);
    }
    body_of.resize(n);
    for (size_t k = 0; k < n; ++k)
      body_of[k] = static_cast<uint32_t>(order[k] % options.dataset_inputs.size());
    rows_sum = static_cast<double>(n);
  } else if (!per_request) {
    ASSIGN_OR_RETURN(std::string body, BuildInferBody(options));
    bodies.push_back(std::move(body));
    rows_sum = static_cast<double>(options.rows) * static_cast<double>(n);
  } else {
    std::map<int32_t, uint32_t> body_index;  // rows -> index into bodies
    body_of.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const int32_t rows = options.request_rows[order[k]];
      rows_sum += rows;
      auto [it, inserted] = body_index.emplace(rows, static_cast<uint32_t>(bodies.size()));
      if (inserted) {
        ASSIGN_OR_RETURN(std::string body, BuildInferBody(options, rows));
        bodies.push_back(std::move(body));
      }
      body_of[k] = it->second;
    }
  }
  auto run =
      std::make_unique<loadgen_internal::LoadRun>(options, std::move(schedule), std::move(body_of),
                                                  std::move(bodies), progress, std::move(labels));
  RETURN_IF_ERROR(run->Connect());
  LoadReport report = run->Run();
  report.labelled = run->labelled();
  report.correct = run->correct();
  if (!options.sizes_label.empty()) {
    report.sizes = options.sizes_label;
  } else {
    report.sizes = per_request ? "per-request" : "constant:" + std::to_string(options.rows);
  }
  report.rows_mean = n > 0 ? rows_sum / static_cast<double>(n) : 0.0;
  AssessClientBottleneck(report, options.slo_ms > 0 ? options.slo_ms : options.default_slo_ms,
                         options.max_connections);
  return report;
}

}  // namespace sloserve
