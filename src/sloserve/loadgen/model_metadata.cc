#include "sloserve/loadgen/model_metadata.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace sloserve {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

StatusOr<ModelInput> FetchModelInput(const std::string& host, uint16_t port,
                                     const std::string& model, Duration timeout) {
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
  http::request<http::empty_body> req{http::verb::get, "/v2/models/" + model, 11};
  req.set(http::field::host, host);
  http::write(stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  if (!ec) http::read(stream, buffer, res, ec);
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  if (res.result() == http::status::not_found) {
    return NotFoundError("model '" + model + "' is not served at " + where);
  }
  if (res.result() != http::status::ok) {
    return UnavailableError("GET /v2/models/" + model + " at " + where + " answered " +
                            std::to_string(res.result_int()));
  }
  const auto doc = nlohmann::json::parse(res.body(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("inputs") || !doc["inputs"].is_array() ||
      doc["inputs"].empty() || !doc["inputs"][0].is_object() ||
      !doc["inputs"][0].value("name", nlohmann::json()).is_string() ||
      !doc["inputs"][0].value("datatype", nlohmann::json()).is_string()) {
    return InvalidArgumentError("metadata of model '" + model + "' at " + where +
                                " has no input with a name and datatype");
  }
  ModelInput input{doc["inputs"][0]["name"].get<std::string>(),
                   doc["inputs"][0]["datatype"].get<std::string>()};
  if (const auto params = doc.find("parameters"); params != doc.end() && params->is_object()) {
    if (const auto slo = params->find("default_slo_ms"); slo != params->end() && slo->is_number()) {
      input.default_slo_ms = std::max(slo->get<double>(), 0.0);
    }
  }
  return input;
}

}  // namespace sloserve
