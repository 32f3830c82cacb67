#include "server/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace sloserve {
namespace {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
}  // namespace

struct TestHttpClient::Impl {
  explicit Impl(Duration t) : timeout(t) {}

  // Runs the io_context until the pending operation finishes; tcp_stream's timer bounds it.
  void Run() {
    ioc.restart();
    ioc.run();
  }

  Duration timeout;
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  std::string host;
};

TestHttpClient::TestHttpClient(Duration timeout) : impl_(std::make_unique<Impl>(timeout)) {}
TestHttpClient::~TestHttpClient() = default;

bool TestHttpClient::connected() const {
  return impl_->stream.has_value() && impl_->stream->socket().is_open();
}

void TestHttpClient::set_timeout(Duration timeout) {
  impl_->timeout = timeout;
}

Status TestHttpClient::Connect(uint16_t port, const std::string& host) {
  Impl& s = *impl_;
  s.stream.emplace(s.ioc);
  s.buffer.clear();
  s.host = host + ":" + std::to_string(port);
  beast::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return InvalidArgumentError("bad address " + host);
  s.stream->expires_after(s.timeout);
  s.stream->async_connect(tcp::endpoint(address, port), [&ec](beast::error_code e) { ec = e; });
  s.Run();
  if (ec) return UnavailableError("connect " + s.host + ": " + ec.message());
  s.stream->socket().set_option(tcp::no_delay(true), ec);
  return OkStatus();
}

StatusOr<TestResponse> TestHttpClient::Request(std::string_view method, std::string_view target,
                                               std::string_view body,
                                               std::string_view content_type) {
  Impl& s = *impl_;
  if (!connected()) return FailedPreconditionError("not connected");
  http::request<http::string_body> req;
  req.method_string(beast::string_view(method.data(), method.size()));
  req.target(beast::string_view(target.data(), target.size()));
  req.version(11);
  req.set(http::field::host, s.host);
  req.keep_alive(true);
  if (!body.empty() || method == "POST") {
    req.set(http::field::content_type,
            beast::string_view(content_type.data(), content_type.size()));
    req.body() = std::string(body);
  }
  req.prepare_payload();

  beast::error_code ec;
  s.stream->expires_after(s.timeout);
  http::async_write(*s.stream, req, [&ec](beast::error_code e, size_t) { ec = e; });
  s.Run();
  if (ec) return UnavailableError("write: " + ec.message());

  http::response_parser<http::string_body> parser;
  parser.body_limit(size_t{1} << 30);
  s.stream->expires_after(s.timeout);
  http::async_read(*s.stream, s.buffer, parser, [&ec](beast::error_code e, size_t) { ec = e; });
  s.Run();
  if (ec) return UnavailableError("read: " + ec.message());
  auto res = parser.release();
  TestResponse out;
  out.status = static_cast<int>(res.result_int());
  out.body = std::move(res.body());
  out.content_type = std::string(res[http::field::content_type]);
  out.allow = std::string(res[http::field::allow]);
  out.keep_alive = res.keep_alive();
  if (!out.keep_alive) {
    beast::error_code ignored;
    s.stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
    s.stream->close();
  }
  return out;
}

StatusOr<std::string> TestHttpClient::SendRaw(std::string_view bytes) {
  Impl& s = *impl_;
  if (!connected()) return FailedPreconditionError("not connected");
  beast::error_code ec;
  s.stream->expires_after(s.timeout);
  asio::async_write(*s.stream, asio::buffer(bytes.data(), bytes.size()),
                    [&ec](beast::error_code e, size_t) { ec = e; });
  s.Run();
  std::string out;
  if (ec) return out;  // the server may close before reading everything
  char chunk[4096];
  for (;;) {
    size_t n = 0;
    s.stream->async_read_some(asio::buffer(chunk), [&](beast::error_code e, size_t k) {
      ec = e;
      n = k;
    });
    s.Run();
    out.append(chunk, n);
    if (ec) break;
  }
  s.stream->close();
  return out;
}

StatusOr<TestResponse> HttpGet(uint16_t port, std::string_view target) {
  TestHttpClient client;
  RETURN_IF_ERROR(client.Connect(port));
  return client.Get(target);
}

StatusOr<TestResponse> HttpPost(uint16_t port, std::string_view target, std::string_view body) {
  TestHttpClient client;
  RETURN_IF_ERROR(client.Connect(port));
  return client.Post(target, body);
}

}  // namespace sloserve
