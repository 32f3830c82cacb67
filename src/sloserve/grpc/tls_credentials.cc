#include "sloserve/grpc/tls_credentials.h"

#include <string>
#include <utility>

namespace sloserve::grpc_protocol {

StatusOr<std::shared_ptr<::grpc::ServerCredentials>> ServerTlsCredentials(
    const TlsFiles& files, const TlsFileNames& names) {
  ::grpc::SslServerCredentialsOptions options(
      files.client_ca_file.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                   : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ::grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.private_key, ReadPemFile(files.key_file, names.key));
  ASSIGN_OR_RETURN(pair.cert_chain, ReadPemFile(files.cert_file, names.cert));
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!files.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(options.pem_root_certs, ReadPemFile(files.client_ca_file, names.ca));
  }
  return ::grpc::SslServerCredentials(options);
}

StatusOr<std::shared_ptr<::grpc::ChannelCredentials>> ChannelTlsCredentials(
    const TlsClientFiles& files, const TlsFileNames& names) {
  if (files.cert_file.empty() != files.key_file.empty()) {
    return InvalidArgumentError(std::string(names.cert) + " and " + names.key +
                                ": set both or neither");
  }
  ::grpc::SslCredentialsOptions options;
  if (!files.ca_file.empty()) {
    ASSIGN_OR_RETURN(options.pem_root_certs, ReadPemFile(files.ca_file, names.ca));
  }
  if (!files.cert_file.empty()) {
    ASSIGN_OR_RETURN(options.pem_cert_chain, ReadPemFile(files.cert_file, names.cert));
    ASSIGN_OR_RETURN(options.pem_private_key, ReadPemFile(files.key_file, names.key));
  }
  return ::grpc::SslCredentials(options);
}

}  // namespace sloserve::grpc_protocol
