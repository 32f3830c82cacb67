// libFuzzer target (docs/fuzzing.md): the profile parser (profiles/*.prof, what
// `serve --profile` and `sim` read). Property: a refusal is an error with a message;
// an accepted suite survives its own text form (write, parse again).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "sloserve/profile/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sloserve;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto suite = ParseProfileText(text, "fuzz.prof");
  if (!suite.ok()) {
    fuzz::Check(!suite.status().message().empty(), "profile refusal without a message");
    return 0;
  }
  auto again = ParseProfileText(WriteProfileText(*suite), "fuzz-rewritten.prof");
  fuzz::Check(again.ok(), "an accepted profile's own text form is refused",
              again.ok() ? "" : again.status().message());
  return 0;
}
