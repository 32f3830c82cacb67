#include "sloserve/server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace sloserve {
namespace {

namespace ssl = boost::asio::ssl;

std::string TlsReason(const boost::system::error_code& ec) {
  std::string why = ec.message();
  if (const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()))) {
    why = reason;
  }
  return why;
}

Status TlsFileError(const std::string& key, const std::string& path,
                    const boost::system::error_code& ec) {
  return InvalidArgumentError(key + " '" + path + "': " + TlsReason(ec));
}

std::unique_ptr<ssl::context> NewTlsContext(ssl::context::method method) {
  auto ctx = std::make_unique<ssl::context>(method);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  return ctx;
}

}  // namespace

StatusOr<std::unique_ptr<ssl::context>> MakeServerTlsContext(const TlsFiles& files) {
  RETURN_IF_ERROR(ValidateTlsFiles(files));
  if (!files.enabled()) return InvalidArgumentError("TLS: no certificate file");
  auto ctx = NewTlsContext(ssl::context::tls_server);
  boost::system::error_code ec;
  if (ctx->use_certificate_chain_file(files.cert_file, ec); ec) {
    return TlsFileError("server.tls_cert_file", files.cert_file, ec);
  }
  if (ctx->use_private_key_file(files.key_file, ssl::context::pem, ec); ec) {
    return TlsFileError("server.tls_key_file", files.key_file, ec);
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return InvalidArgumentError("server.tls_key_file '" + files.key_file +
                                "' is not the key of server.tls_cert_file '" + files.cert_file +
                                "'");
  }
  if (!files.client_ca_file.empty()) {
    if (ctx->load_verify_file(files.client_ca_file, ec); ec) {
      return TlsFileError("server.tls_client_ca_file", files.client_ca_file, ec);
    }
    // The CA's name goes in the CertificateRequest, so a client with several picks this one.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
    }
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  return ctx;
}

StatusOr<std::unique_ptr<ssl::context>> MakeClientTlsContext(const std::string& ca_file,
                                                             const std::string& cert_file,
                                                             const std::string& key_file) {
  auto ctx = NewTlsContext(ssl::context::tls_client);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
  } else {
    ctx->load_verify_file(ca_file, ec);
  }
  if (ec) return TlsFileError("--tls-ca", ca_file, ec);
  ctx->set_verify_mode(ssl::verify_peer);
  if (cert_file.empty() != key_file.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key: give both or neither");
  }
  if (!cert_file.empty()) {
    if (ctx->use_certificate_chain_file(cert_file, ec); ec)
      return TlsFileError("--tls-cert", cert_file, ec);
    if (ctx->use_private_key_file(key_file, ssl::context::pem, ec); ec) {
      return TlsFileError("--tls-key", key_file, ec);
    }
  }
  return ctx;
}

StatusOr<std::unique_ptr<ssl::context>> MakeClientTlsContextFor(const TlsClientFiles& files,
                                                                const std::string& host) {
  ASSIGN_OR_RETURN(auto ctx, MakeClientTlsContext(files.ca_file, files.cert_file, files.key_file));
  ctx->set_verify_callback(ssl::host_name_verification(host));
  return ctx;
}

bool SetClientServerName(SSL* ssl, const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  if (!ec) return true;  // an IP address: no SNI (RFC 6066 3)
  return SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
}

}  // namespace sloserve
