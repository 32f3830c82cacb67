#include "server/https_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "sloserve/server/tls_context.h"

namespace sloserve {
namespace {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
}  // namespace

StatusOr<TestResponse> HttpsRequest(uint16_t port, const HttpsClientFiles& files,
                                    std::string_view method, std::string_view target,
                                    std::string_view body, std::string_view authorization) {
  ASSIGN_OR_RETURN(auto ctx, MakeClientTlsContext(files.ca_file, files.cert_file, files.key_file));
  ctx->set_verify_callback(asio::ssl::host_name_verification("127.0.0.1"));
  asio::io_context ioc;
  beast::tcp_stream tcp_stream(ioc);
  asio::ssl::stream<beast::tcp_stream&> stream(tcp_stream, *ctx);
  const auto run = [&ioc] {
    ioc.restart();
    ioc.run();
  };
  beast::error_code ec;
  tcp_stream.expires_after(std::chrono::seconds(10));
  tcp_stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
                           [&ec](beast::error_code e) { ec = e; });
  run();
  if (ec) return UnavailableError("connect: " + ec.message());
  stream.async_handshake(asio::ssl::stream_base::client, [&ec](beast::error_code e) { ec = e; });
  run();
  if (ec) return UnavailableError("TLS handshake: " + ec.message());
  http::request<http::string_body> req;
  req.method_string(beast::string_view(method.data(), method.size()));
  req.target(beast::string_view(target.data(), target.size()));
  req.version(11);
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  req.keep_alive(false);
  if (!authorization.empty()) {
    req.set(http::field::authorization,
            beast::string_view(authorization.data(), authorization.size()));
  }
  if (method == "POST") {
    req.set(http::field::content_type, "application/json");
    req.body() = std::string(body);
  }
  req.prepare_payload();
  http::async_write(stream, req, [&ec](beast::error_code e, size_t) { ec = e; });
  run();
  if (ec) return UnavailableError("write: " + ec.message());
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::async_read(stream, buffer, res, [&ec](beast::error_code e, size_t) { ec = e; });
  run();
  if (ec) return UnavailableError("read: " + ec.message());
  TestResponse out;
  out.status = static_cast<int>(res.result_int());
  out.body = res.body();
  out.content_type = std::string(res[http::field::content_type]);
  out.keep_alive = res.keep_alive();
  return out;
}

}  // namespace sloserve
