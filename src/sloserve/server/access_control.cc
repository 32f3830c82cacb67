#include "sloserve/server/access_control.h"

#include <fstream>
#include <sstream>

namespace sloserve {

StatusOr<std::string> ReadTokenFile(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError(key + ": cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!token.empty() && space(token.back())) token.pop_back();
  size_t first = 0;
  while (first < token.size() && space(token[first])) ++first;
  token.erase(0, first);
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return InvalidArgumentError(key + " '" + path +
                                  "': the token must be one line of printable characters "
                                  "without spaces");
    }
  }
  if (token.size() < kMinTokenLength) {
    return InvalidArgumentError(key + " '" + path + "': the token has " +
                                std::to_string(token.size()) + " characters, at least " +
                                std::to_string(kMinTokenLength) +
                                " are needed (e.g. openssl rand -hex 32 > " + path + ")");
  }
  return token;
}

bool ConstantTimeEquals(std::string_view presented, std::string_view expected) {
  if (expected.empty()) return presented.empty();
  // Every byte of `presented` is compared (against `expected` repeated), whatever differs:
  // the loop's length is the guess's, which the guesser knows anyway.
  volatile unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < presented.size(); ++i) {
    diff = diff | static_cast<unsigned char>(presented[i] ^ expected[i % expected.size()]);
  }
  return diff == 0;
}

AccessControl::AccessControl(AccessOptions options)
    : options_(std::move(options)),
      control_enabled_(options_.model_control == ModelControl::kExplicit),
      has_token_(!options_.admin_token.empty()),
      token_for_infer_(has_token_ && options_.require_token_for_infer),
      token_for_metrics_(has_token_ && options_.require_token_for_metrics) {}

Status AccessControl::Validate(const AccessOptions& options) {
  if (options.admin_token.empty() &&
      (options.require_token_for_infer || options.require_token_for_metrics)) {
    return InvalidArgumentError(
        "server.require_token_for_infer and server.require_token_for_metrics need a token: "
        "set server.admin_token_file");
  }
  return OkStatus();
}

AccessDenial AccessControl::ControlDisabled() {
  return {AccessDenial::Kind::kForbidden,
          "model control is disabled: loading and unloading models needs "
          "server.model_control: explicit in the serve config (or --set "
          "server.model_control=explicit), best with server.admin_token_file (docs/serve.md, "
          "\"Security\")"};
}

std::optional<AccessDenial> AccessControl::CheckToken(std::string_view authorization) const {
  constexpr std::string_view kScheme = "bearer ";
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  bool bearer = authorization.size() > kScheme.size();
  for (size_t i = 0; bearer && i < kScheme.size(); ++i)
    bearer = lower(authorization[i]) == kScheme[i];
  if (!bearer) {
    return AccessDenial{AccessDenial::Kind::kUnauthenticated,
                        authorization.empty()
                            ? "this endpoint needs the admin token: send Authorization: Bearer "
                              "<token> (docs/serve.md, \"Security\")"
                            : "the Authorization header must be Bearer <token>"};
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (!ConstantTimeEquals(token, options_.admin_token)) {
    return AccessDenial{AccessDenial::Kind::kUnauthenticated, "wrong token"};
  }
  return std::nullopt;
}

}  // namespace sloserve
