#pragma once
// The PEM files of a TLS endpoint (server.tls_cert_file, server.tls_key_file,
// server.tls_client_ca_file; docs/serve.md "Security"), shared by the HTTP and gRPC
// servers. Plain strings: only the code that builds a TLS context includes OpenSSL.
#include <string>

#include "sloserve/core/status.h"

namespace sloserve {

struct TlsFiles {
  std::string cert_file;       // certificate chain, leaf first; empty = TLS off
  std::string key_file;        // its private key
  std::string client_ca_file;  // set: every client must present a certificate it signed
  bool enabled() const { return !cert_file.empty(); }
};

// A client's side (loadgen --tls-ca/--tls-cert/--tls-key): TLS when any is set.
struct TlsClientFiles {
  std::string ca_file;    // trusted roots; empty = the system's
  std::string cert_file;  // client certificate, for a server that asks for one
  std::string key_file;
  bool enabled() const { return !ca_file.empty() || !cert_file.empty() || !key_file.empty(); }
};

// InvalidArgument unless both cert and key are set (or neither, and then no client CA).
Status ValidateTlsFiles(const TlsFiles& files);

// The whole file (PEM text); InvalidArgument naming `key` and the path when unreadable.
StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& key);

}  // namespace sloserve
