#pragma once
// Who may call which endpoint (docs/serve.md "Security"), independent of the transport:
// the HTTP handler and the gRPC server ask Check() with the request's Authorization
// header (HTTP) or "authorization" metadata (gRPC) and map a denial to 403/401 or
// PERMISSION_DENIED/UNAUTHENTICATED.
//
//   kControl     model load/unload: refused (403) unless model_control is explicit;
//                then, with a token, the token is required.
//   kStatistics  per-model statistics (REST /v2/models[/{m}]/stats, gRPC
//                ModelStatistics): the token is required when one is set.
//   kMetrics     Prometheus /metrics: the token only with require_token_for_metrics.
//   kInfer       inference: the token only with require_token_for_infer.
// Everything else (health, metadata, the repository index) is open.
#include <optional>
#include <string>
#include <string_view>

#include "sloserve/core/status.h"

namespace sloserve {

enum class ModelControl { kNone, kExplicit };

struct AccessOptions {
  ModelControl model_control = ModelControl::kNone;
  std::string admin_token;  // empty: no token is asked for
  bool require_token_for_infer = false;
  bool require_token_for_metrics = false;
};

enum class Endpoint { kOpen, kInfer, kStatistics, kMetrics, kControl };

struct AccessDenial {
  enum class Kind { kForbidden, kUnauthenticated };
  Kind kind = Kind::kForbidden;
  std::string message;
};

// A token as read from server.admin_token_file: surrounding whitespace (the file's
// newline) dropped; refused when empty, shorter than kMinTokenLength or holding
// whitespace or control characters (it travels in an HTTP header). Errors name `key`.
inline constexpr size_t kMinTokenLength = 16;
StatusOr<std::string> ReadTokenFile(const std::string& path,
                                    const std::string& key = "server.admin_token_file");

// a == b in a time that depends on the length of `presented` only, not on where the
// strings differ (a guesser learns nothing from how long a wrong guess took).
bool ConstantTimeEquals(std::string_view presented, std::string_view expected);

class AccessControl {
 public:
  AccessControl() = default;
  explicit AccessControl(AccessOptions options);

  // InvalidArgument when a require_token_* option is set without a token.
  static Status Validate(const AccessOptions& options);

  // Whether Check(endpoint, ...) looks at the credentials (so a caller can skip finding them).
  bool NeedsToken(Endpoint endpoint) const {
    switch (endpoint) {
      case Endpoint::kOpen:
        return false;
      case Endpoint::kInfer:
        return token_for_infer_;
      case Endpoint::kMetrics:
        return token_for_metrics_;
      case Endpoint::kStatistics:
      case Endpoint::kControl:
        return has_token_;
    }
    return has_token_;
  }

  // nullopt when the request may proceed. `authorization`: "Bearer <token>" (the scheme
  // is case-insensitive), empty when the request carried none.
  std::optional<AccessDenial> Check(Endpoint endpoint, std::string_view authorization) const {
    if (endpoint == Endpoint::kControl && !control_enabled_) return ControlDisabled();
    if (!NeedsToken(endpoint)) return std::nullopt;
    return CheckToken(authorization);
  }

  const AccessOptions& options() const { return options_; }

 private:
  static AccessDenial ControlDisabled();
  std::optional<AccessDenial> CheckToken(std::string_view authorization) const;

  AccessOptions options_;
  // Derived from options_ so the per-request checks are a load and a branch.
  bool control_enabled_ = false;
  bool has_token_ = false;
  bool token_for_infer_ = false;
  bool token_for_metrics_ = false;
};

}  // namespace sloserve
