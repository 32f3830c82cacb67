#pragma once
// Names a client sent (model, input, output, app, datatype, version) are quoted back in
// error messages, which must stay small: a 100 kB model name echoed into `grpc-message`
// made the client see RESOURCE_EXHAUSTED (the metadata limit) instead of NOT_FOUND, and
// an HTTP error body would amplify it the same way. Echo them through EchoName.
#include <cstddef>
#include <string>
#include <string_view>

namespace sloserve {

// Longest name echoed whole, in bytes.
inline constexpr size_t kMaxEchoedName = 128;

// `name` if at most kMaxEchoedName bytes, else its first kMaxEchoedName bytes (cut back
// to a UTF-8 character boundary) followed by "…" and how long it was ("…(100000 bytes)").
std::string EchoName(std::string_view name);

}  // namespace sloserve
