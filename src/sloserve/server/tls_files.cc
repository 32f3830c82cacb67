#include "sloserve/server/tls_files.h"

#include <fstream>
#include <sstream>

namespace sloserve {

Status ValidateTlsFiles(const TlsFiles& files) {
  if (files.cert_file.empty() != files.key_file.empty()) {
    return InvalidArgumentError(
        "server.tls_cert_file and server.tls_key_file: set both (TLS) or neither");
  }
  if (!files.enabled() && !files.client_ca_file.empty()) {
    return InvalidArgumentError(
        "server.tls_client_ca_file needs TLS: set server.tls_cert_file and server.tls_key_file");
  }
  return OkStatus();
}

StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError(key + ": cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return InvalidArgumentError(key + ": '" + path + "' is not a PEM file");
  }
  return text.str();
}

}  // namespace sloserve
