#pragma once
// One HTTPS exchange for the TLS tests (Boost.Asio SSL, hidden in https_client.cc): the
// client trusts `ca_file`, checks that the server's certificate names 127.0.0.1, and
// presents `cert_file`/`key_file` when set. Any TLS failure (the handshake, or the
// server's alert on the first read under TLS 1.3) is an Unavailable status, not a response.
#include <cstdint>
#include <string>
#include <string_view>

#include "server/http_client.h"
#include "sloserve/core/status.h"

namespace sloserve {

struct HttpsClientFiles {
  std::string ca_file;
  std::string cert_file;  // empty: no client certificate
  std::string key_file;
};

StatusOr<TestResponse> HttpsRequest(uint16_t port, const HttpsClientFiles& files,
                                    std::string_view method, std::string_view target,
                                    std::string_view body = {},
                                    std::string_view authorization = {});

}  // namespace sloserve
