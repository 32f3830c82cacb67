#pragma once
// gRPC's SSL credentials from PEM files (tls_files.h), for the inference server, the
// `sloserve worker` server and the controller's channels to workers. The files are read
// here, once: errors name the setting (`names`) and the file.
#include <grpcpp/grpcpp.h>

#include <memory>

#include "sloserve/core/status.h"
#include "sloserve/server/tls_files.h"

namespace sloserve::grpc_protocol {

// How errors name the three files (config keys or command-line flags).
struct TlsFileNames {
  const char* cert = "server.tls_cert_file";
  const char* key = "server.tls_key_file";
  const char* ca = "server.tls_client_ca_file";
};

// A server presenting files.cert_file; with files.client_ca_file, clients must present a
// certificate it signed.
StatusOr<std::shared_ptr<::grpc::ServerCredentials>> ServerTlsCredentials(
    const TlsFiles& files, const TlsFileNames& names = {});

// A client trusting files.ca_file (empty: gRPC's default roots) and presenting
// files.cert_file/key_file when set. The server's certificate must name the host of the
// address the channel connects to.
StatusOr<std::shared_ptr<::grpc::ChannelCredentials>> ChannelTlsCredentials(
    const TlsClientFiles& files, const TlsFileNames& names);

}  // namespace sloserve::grpc_protocol
