#include "sloserve/loadgen/model_metadata.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "sloserve/server/tls_context.h"

namespace sloserve {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

struct GetResult {
  int status = 0;
  std::string body;
};

// One GET on a fresh connection (HTTPS when `tls` is enabled); Unavailable if the server
// cannot be reached.
StatusOr<GetResult> Get(const std::string& host, uint16_t port, const std::string& target,
                        Duration timeout, const TlsClientFiles& tls) {
  const std::string where = host + ":" + std::to_string(port);
  boost::asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return UnavailableError("cannot resolve " + where + ": " + ec.message());
  stream.expires_after(std::chrono::microseconds(timeout.count()));
  stream.connect(endpoints, ec);
  if (ec) return UnavailableError("cannot connect to " + where + ": " + ec.message());
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  const auto exchange = [&](auto& s) {
    http::write(s, req, ec);
    if (!ec) http::read(s, buffer, res, ec);
  };
  if (tls.enabled()) {
    ASSIGN_OR_RETURN(auto ctx, MakeClientTlsContextFor(tls, host));
    boost::asio::ssl::stream<beast::tcp_stream&> tls_stream(stream, *ctx);
    SetClientServerName(tls_stream.native_handle(), host);
    tls_stream.handshake(boost::asio::ssl::stream_base::client, ec);
    if (ec) return UnavailableError("TLS handshake with " + where + ": " + ec.message());
    exchange(tls_stream);
  } else {
    exchange(stream);
  }
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return GetResult{static_cast<int>(res.result_int()), res.body()};
}

}  // namespace

StatusOr<ModelInput> FetchModelInput(const std::string& host, uint16_t port,
                                     const std::string& model, Duration timeout,
                                     const TlsClientFiles& tls) {
  const std::string where = host + ":" + std::to_string(port);
  ASSIGN_OR_RETURN(GetResult res, Get(host, port, "/v2/models/" + model, timeout, tls));
  if (res.status == 404) {
    return NotFoundError("model '" + model + "' is not served at " + where);
  }
  if (res.status != 200) {
    return UnavailableError("GET /v2/models/" + model + " at " + where + " answered " +
                            std::to_string(res.status));
  }
  const auto doc = nlohmann::json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("inputs") || !doc["inputs"].is_array() ||
      doc["inputs"].empty() || !doc["inputs"][0].is_object() ||
      !doc["inputs"][0].value("name", nlohmann::json()).is_string() ||
      !doc["inputs"][0].value("datatype", nlohmann::json()).is_string()) {
    return InvalidArgumentError("metadata of model '" + model + "' at " + where +
                                " has no input with a name and datatype");
  }
  ModelInput input{doc["inputs"][0]["name"].get<std::string>(),
                   doc["inputs"][0]["datatype"].get<std::string>()};
  if (const auto shape = doc["inputs"][0].find("shape");
      shape != doc["inputs"][0].end() && shape->is_array()) {
    for (const auto& d : *shape) {
      if (!d.is_number_integer()) {
        return InvalidArgumentError("metadata of model '" + model + "' at " + where +
                                    ": input shape " + shape->dump() +
                                    " is not a list of integers");
      }
      input.shape.push_back(d.get<int64_t>());
    }
  }
  if (const auto params = doc.find("parameters"); params != doc.end() && params->is_object()) {
    if (const auto slo = params->find("default_slo_ms"); slo != params->end() && slo->is_number()) {
      input.default_slo_ms = std::max(slo->get<double>(), 0.0);
    }
  }
  return input;
}

Status WaitUntilModelReady(const std::string& host, uint16_t port, const std::string& model,
                           Duration max_wait,
                           const std::function<void(const std::string&)>& waiting,
                           const TlsClientFiles& tls) {
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  std::string last_reason;
  for (;;) {
    auto res = Get(host, port, "/v2/models/" + model + "/ready", Seconds(5), tls);
    if (!res.ok()) return res.status();
    if (res->status == 200) return OkStatus();
    if (res->status == 404) {
      return NotFoundError("model '" + model + "' is not served at " + host + ":" +
                           std::to_string(port));
    }
    const auto doc = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    std::string reason = "HTTP " + std::to_string(res->status);
    if (doc.is_object() && doc.contains("reason") && doc["reason"].is_string()) {
      reason = doc["reason"].get<std::string>();
    }
    if (waiting && reason != last_reason) waiting(reason);
    last_reason = reason;
    if (std::chrono::steady_clock::now() >= deadline) {
      return UnavailableError("model '" + model + "' not ready after " +
                              std::to_string(ToSeconds(max_wait)) + " s: " + reason);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace sloserve
