#include "sloserve/grpc/tls_reload.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sloserve/server/tls_context.h"

namespace sloserve::grpc_protocol {
namespace {

// Writes `text` to dir/name atomically (a temporary file renamed over it), mode 0600.
Status WriteAtomically(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name, tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return InternalError("cannot write " + tmp);
  }
  chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return InternalError("cannot replace " + path);
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<ReloadableServerTls>> ReloadableServerTls::Create(
    const TlsFiles& files, const TlsFileNames& names) {
  std::unique_ptr<ReloadableServerTls> tls(new ReloadableServerTls(files, names));
  const char* tmpdir = std::getenv("TMPDIR");
  std::string dir = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                    "/sloserve-grpc-tls-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return InternalError("gRPC TLS: cannot make a private directory like " + dir);
  }
  tls->dir_ = dir;
  RETURN_IF_ERROR(tls->WriteCopies());
  const bool verify_clients = !files.client_ca_file.empty();
  tls->provider_ = std::make_shared<::grpc::experimental::FileWatcherCertificateProvider>(
      dir + "/key.pem", dir + "/cert.pem", verify_clients ? dir + "/ca.pem" : "", kRefreshSeconds);
  ::grpc::experimental::TlsServerCredentialsOptions options(tls->provider_);
  options.watch_identity_key_cert_pairs();
  if (verify_clients) options.watch_root_certs();
  options.set_cert_request_type(verify_clients
                                    ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                    : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  tls->credentials_ = ::grpc::experimental::TlsServerCredentials(options);
  if (tls->credentials_ == nullptr) return InternalError("gRPC TLS: cannot make the credentials");
  return tls;
}

ReloadableServerTls::~ReloadableServerTls() {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status ReloadableServerTls::Reload() {
  return WriteCopies();
}

Status ReloadableServerTls::WriteCopies() {
  // Everything read and checked (as the HTTPS port does: PEM, the key the certificate's)
  // before anything is replaced.
  RETURN_IF_ERROR(ValidateTlsFiles(files_));
  RETURN_IF_ERROR(MakeServerTlsContext(files_).status());
  ASSIGN_OR_RETURN(std::string key, ReadPemFile(files_.key_file, names_.key));
  ASSIGN_OR_RETURN(std::string cert, ReadPemFile(files_.cert_file, names_.cert));
  std::string ca;
  if (!files_.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(ca, ReadPemFile(files_.client_ca_file, names_.ca));
    RETURN_IF_ERROR(WriteAtomically(dir_, "ca.pem", ca));
  }
  // gRPC re-reads a pair whose files changed while it read them, and keeps the pair it has
  // when a key does not match its certificate: the key first, then the certificate.
  RETURN_IF_ERROR(WriteAtomically(dir_, "key.pem", key));
  return WriteAtomically(dir_, "cert.pem", cert);
}

}  // namespace sloserve::grpc_protocol
