#include "sloserve/remote/worker_set.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "sloserve/core/declared_key.h"
#include "sloserve/remote/worker_server.h"

namespace sloserve::remote {

StatusOr<std::pair<std::string, std::string>> ParseDnsTarget(const std::string& target) {
  const std::string rest = target.substr(std::string(kDnsScheme).size());
  const size_t colon = rest.rfind(':');
  const std::string name = colon == std::string::npos ? "" : rest.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : rest.substr(colon + 1);
  const bool digits =
      !port.empty() && port.size() <= 5 &&
      std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  const uint64_t number = digits ? ParseUnsigned(port).value_or(0) : 0;  // 0: not a port
  if (name.empty() || name.find_first_of("/[]") != std::string::npos || number < 1 ||
      number > 65535) {
    return InvalidArgumentError("'" + target + "': the DNS form is dns:///NAME:PORT (e.g. " +
                                "dns:///sloserve-worker:9000; every address of NAME is a worker)");
  }
  return std::make_pair(name, port);
}

StatusOr<std::vector<std::string>> ParseWorkersFile(const std::string& text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::replace(line.begin(), line.end(), ',', ' ');
    size_t i = 0;
    while (i < line.size()) {
      const size_t start = line.find_first_not_of(" \t\r", i);
      if (start == std::string::npos) break;
      const size_t stop = std::min(line.find_first_of(" \t\r", start), line.size());
      const std::string item = line.substr(start, stop - start);
      i = stop;
      RETURN_IF_ERROR(CheckAddress(item, /*allow_any_port=*/false)
                          .WithPrefix("line " + std::to_string(line_no)));
      if (seen.insert(item).second) out.push_back(item);
    }
  }
  return out;
}

StatusOr<std::vector<std::string>> ResolveWorkers(const std::string& name,
                                                  const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(name.c_str(), port.c_str(), &hints, &found);
  if (rc == EAI_NONAME || rc == EAI_NODATA) return std::vector<std::string>{};
  if (rc != 0) return UnavailableError("resolving " + name + ": " + gai_strerror(rc));
  std::set<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char host[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr, host,
                sizeof(host));
      addresses.insert(std::string(host) + ":" + port);
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr, host,
                sizeof(host));
      addresses.insert("[" + std::string(host) + "]:" + port);
    }
  }
  freeaddrinfo(found);
  return std::vector<std::string>(addresses.begin(), addresses.end());
}

Status WorkerSetSource::Refresh(std::chrono::steady_clock::time_point now) {
  if (!file_.empty()) {
    std::ifstream in(file_);
    if (!in) return NotFoundError(file_ + ": cannot open the workers file");
    std::stringstream text;
    text << in.rdbuf();
    if (text.str() == file_text_) return OkStatus();
    auto parsed = ParseWorkersFile(text.str());
    if (!parsed.ok()) return parsed.status().WithPrefix(file_);
    file_text_ = text.str();
    addresses_ = std::move(*parsed);
    return OkStatus();
  }
  if (now < next_lookup_) return OkStatus();
  next_lookup_ = now + interval_;
  ASSIGN_OR_RETURN(auto target, ParseDnsTarget(dns_target_));
  ASSIGN_OR_RETURN(addresses_, ResolveWorkers(target.first, target.second));
  return OkStatus();
}

}  // namespace sloserve::remote
