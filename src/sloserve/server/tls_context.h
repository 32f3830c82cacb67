#pragma once
// OpenSSL contexts (Boost.Asio SSL) from PEM files: the HTTP server's, and a client's
// (loadgen, tests). TLS 1.2 at least. Only the files that run TLS connections include this.
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/server/tls_files.h"

namespace sloserve {

// A server context presenting `files.cert_file`; with `files.client_ca_file`, clients
// must present a certificate that CA signed (the handshake fails otherwise). Errors name
// the key and file with OpenSSL's reason (a key that does not match the certificate too).
StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const TlsFiles& files);

// A client context trusting `ca_file` (empty: the system's default roots) and, when
// `cert_file` is set, presenting it with `key_file`. The caller checks the host name.
StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const std::string& ca_file, const std::string& cert_file = "",
    const std::string& key_file = "");

// MakeClientTlsContext(files...) that also checks the server's certificate names `host`
// (a DNS name or an IP address). Set the SNI with SetClientServerName on each stream.
StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeClientTlsContextFor(
    const TlsClientFiles& files, const std::string& host);

// Sends `host` as the server name (SNI) unless it is an IP address; false on failure.
bool SetClientServerName(SSL* ssl, const std::string& host);

}  // namespace sloserve
