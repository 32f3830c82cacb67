#pragma once
// The answer to a request naming a model the server does not serve (HTTP 404, gRPC
// NOT_FOUND), one wording for both frontends and the runtime: the name as the client sent
// it (EchoName), the closest served name, and the served names (at most 16 listed, then
// how many more), e.g. "unknown model 'imgae' (did you mean 'image'? served: image, text)".
// Header-only: the runtime, which does not link the server library, answers it too.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/core/echo_name.h"

namespace sloserve {

inline constexpr size_t kMaxModelsNamed = 16;

// Names longer than this get no suggestion (the edit distance is quadratic in the length).
inline constexpr size_t kMaxSuggestedNameLength = 64;

inline std::string UnknownModelMessage(std::string_view name,
                                       const std::vector<std::string>& served) {
  // Only names of about the same length can be close (ClosestName: a third of the length)
  // or start with it: the others are not measured, so a server of many models stays cheap.
  std::vector<std::string> near;
  if (name.size() <= kMaxSuggestedNameLength) {
    for (const std::string& s : served) {
      const size_t longer = std::max(s.size(), name.size());
      const size_t shorter = std::min(s.size(), name.size());
      if (longer - shorter <= name.size() / 3 + 1 || s.starts_with(name)) near.push_back(s);
    }
  }
  std::string out = "unknown model '" + EchoName(name) + "' (" + DidYouMean(name, near);
  if (served.empty()) return out + "this server serves no model)";
  std::vector<std::string> listed(
      served.begin(),
      served.begin() + static_cast<std::ptrdiff_t>(std::min(served.size(), kMaxModelsNamed)));
  out += "served: " + JoinNames(listed);
  if (served.size() > listed.size())
    out += " and " + std::to_string(served.size() - listed.size()) + " more (GET /v2/models)";
  return out + ")";
}

}  // namespace sloserve
