#pragma once
// A minimal HTTP/1.0 GET or POST over a POSIX socket, for end-to-end tests that read a real
// server's /metrics without linking an HTTP library. HTTP/1.0 without keep-alive makes
// the server close the connection after the response, so the body ends at EOF.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace sloserve::testing {

// A TCP connection to 127.0.0.1:<port> with 10 s send and receive timeouts (never hang a
// test on a stuck server): its descriptor, or -1.
inline int ConnectLoopback(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The whole response (status line, headers, body) of one HTTP/1.0 exchange with
// 127.0.0.1:<port>; empty on any failure. `sent`, when given, says whether the request
// was written completely.
inline std::string HttpExchange(uint16_t port, const std::string& request, bool* sent = nullptr) {
  if (sent != nullptr) *sent = false;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  std::string response;
  size_t written = 0;
  while (written < request.size()) {
    const ssize_t n = send(fd, request.data() + written, request.size() - written, MSG_NOSIGNAL);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  if (sent != nullptr) *sent = written == request.size();
  char buf[4096];
  for (ssize_t n; written == request.size() && (n = recv(fd, buf, sizeof buf, 0)) > 0;) {
    response.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return response;
}

// The response body of one HTTP/1.0 exchange with 127.0.0.1:<port>; empty on any failure.
inline std::string HttpExchangeBody(uint16_t port, const std::string& request) {
  const std::string response = HttpExchange(port, request);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// The response body of GET http://127.0.0.1:<port><target>; empty on any failure.
inline std::string HttpGetBody(uint16_t port, const std::string& target) {
  return HttpExchangeBody(port, "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
}

// A JSON POST request's text.
inline std::string HttpPostRequest(const std::string& target, const std::string& body) {
  return "POST " + target +
         " HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The response body of a JSON POST; empty on any failure.
inline std::string HttpPostBody(uint16_t port, const std::string& target, const std::string& body) {
  return HttpExchangeBody(port, HttpPostRequest(target, body));
}

}  // namespace sloserve::testing
