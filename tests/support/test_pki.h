#pragma once
// Certificates for the TLS tests, made at test time with the openssl CLI (Debian's
// `openssl` package, scripts/setup): a CA, a server certificate for 127.0.0.1/localhost and
// a client certificate it signed, and a second CA with a client certificate of its own
// (which the server must refuse). EC P-256 keys: quick to generate. Nothing is committed.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace sloserve::testing {

struct TestPki {
  explicit TestPki(const std::string& prefix = "pki") : dir(prefix) {
    ok = MakeCa("ca") && MakeCa("other-ca") && MakeCert("server", "ca", "serverAuth", true) &&
         MakeCert("client", "ca", "clientAuth", false) &&
         MakeCert("other-client", "other-ca", "clientAuth", false) &&
         MakeCert("other-server", "other-ca", "serverAuth", true);
  }
  // <name>.pem (certificate) and <name>.key (its key).
  std::string Pem(const std::string& name) const { return dir.File(name + ".pem"); }
  std::string Key(const std::string& name) const { return dir.File(name + ".key"); }

  ScopedTempDir dir;
  bool ok = false;
  std::string log;  // openssl's output when something failed

 private:
  bool Run(std::vector<std::string> args) {
    args.insert(args.begin(), "/usr/bin/openssl");
    const ProcessResult r = RunProcess(args);
    if (r.exit_code != 0) log += r.out + r.err;
    return r.exit_code == 0;
  }
  bool MakeCa(const std::string& name) {
    return Run({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", Key(name), "-out", Pem(name), "-days", "2", "-subj",
                "/CN=sloserve-test-" + name});
  }
  bool MakeCert(const std::string& name, const std::string& ca, const std::string& usage,
                bool server) {
    const std::string ext = dir.File(name + ".ext");
    std::ofstream(ext) << (server ? "subjectAltName=IP:127.0.0.1,DNS:localhost\n" : "")
                       << "extendedKeyUsage=" << usage << "\n";
    const std::string csr = dir.File(name + ".csr");
    return Run({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", Key(name), "-out", csr, "-subj",
                "/CN=" + (server ? "localhost" : name)}) &&
           Run({"x509", "-req", "-in", csr, "-CA", Pem(ca), "-CAkey", Key(ca), "-CAcreateserial",
                "-out", Pem(name), "-days", "2", "-extfile", ext});
  }
};

}  // namespace sloserve::testing
