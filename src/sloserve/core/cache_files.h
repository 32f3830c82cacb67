#pragma once
// Files of the on-disk caches (parsed profile suites, RAMSIS policy sets): written
// atomically so concurrent readers never see a partial file, and pruned so a cache dir
// stays bounded however many suites or configurations a user goes through.
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "sloserve/core/status.h"

namespace sloserve {

// Writes `path` through a temporary file unique to this process and call, then renames it
// into place: a reader sees the old file, the complete new one, or none. `write` fills the
// stream; a stream error, a failed write or a failed rename returns UNAVAILABLE naming the
// file, and no temporary file is left behind.
Status WriteFileAtomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// Marks a cache file as just used, so that pruning keeps recently read entries (the files'
// modification times order them). Best effort: errors are ignored.
void TouchCacheFile(const std::string& path);

// Deletes the files in `dir` whose names end with `extension` beyond the `keep_newest`
// most recently written or touched, and temporary files of WriteFileAtomically older than
// an hour (left by a writer that died). A mapped or open file stays readable by its users
// after deletion (POSIX). Returns how many files were deleted; errors are ignored, since a
// cache that cannot be pruned still works.
size_t PruneCacheFiles(const std::string& dir, std::string_view extension, size_t keep_newest);

}  // namespace sloserve
