#pragma once
// Property checks for the libFuzzer targets (docs/fuzzing.md): a failed check prints
// what was wrong and aborts, which libFuzzer reports as a crash and saves the input.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sloserve::fuzz {

[[noreturn]] inline void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz property failed: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

inline void Check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) Fail(what, detail);
}

inline bool IsValidJson(std::string_view text) {
  return !nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false)
              .is_discarded();
}

}  // namespace sloserve::fuzz
