#pragma once
// The hash a measured profile records of each model file it measured (`model_hash`
// records, docs/profiles.md), so `serve --model-repository` can tell that a variant's
// model.pt changed after `profile measure`: a fast 64-bit hash of the file's bytes
// (suite_cache.h's HashSuiteText), not a cryptographic one; it detects replaced files,
// not tampering.
#include <cstdint>
#include <string>

#include "sloserve/core/status.h"

namespace sloserve {

// The hash of the file's bytes. NotFound/Unavailable naming the path if it cannot be read.
StatusOr<uint64_t> HashModelFile(const std::string& path);
// 16 lower-case hex digits, as profiles write it.
std::string ModelHashHex(uint64_t hash);

}  // namespace sloserve
