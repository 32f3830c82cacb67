#pragma once
// The inference gRPC server's TLS with certificates that can be replaced while it serves
// (serve's SIGHUP, docs/serve.md "Rotating the certificate"). gRPC's SSL credentials are
// fixed once made, so the server uses its TLS credentials over a file-watching
// certificate provider instead, pointed at private copies of the configured files in a
// directory of its own (mode 0700): Reload() re-reads the configured files and, when
// they are good, replaces the copies; gRPC picks them up within kRefreshSeconds for new
// connections (open ones keep theirs). The configured files themselves are read only at
// start and on Reload, so a half-written file is never served.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/grpc/tls_credentials.h"
#include "sloserve/server/tls_files.h"

namespace sloserve::grpc_protocol {

class ReloadableServerTls {
 public:
  // How often gRPC looks at the copies.
  static constexpr unsigned kRefreshSeconds = 1;

  // Reads `files` (errors name them by `names`), writes the copies, makes the credentials.
  static StatusOr<std::unique_ptr<ReloadableServerTls>> Create(const TlsFiles& files,
                                                               const TlsFileNames& names = {});
  ~ReloadableServerTls();  // removes the copies
  ReloadableServerTls(const ReloadableServerTls&) = delete;
  ReloadableServerTls& operator=(const ReloadableServerTls&) = delete;

  std::shared_ptr<::grpc::ServerCredentials> credentials() const { return credentials_; }

  // Re-reads the configured files; when each is readable PEM and the key is the
  // certificate's, replaces the copies (else the error, and the copies stay).
  Status Reload();

 private:
  ReloadableServerTls(TlsFiles files, TlsFileNames names)
      : files_(std::move(files)), names_(names) {}
  Status WriteCopies();

  const TlsFiles files_;
  const TlsFileNames names_;
  std::string dir_;  // the private copies: key.pem, cert.pem, ca.pem
  std::shared_ptr<::grpc::experimental::CertificateProviderInterface> provider_;
  std::shared_ptr<::grpc::ServerCredentials> credentials_;
};

}  // namespace sloserve::grpc_protocol
