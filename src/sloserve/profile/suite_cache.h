#pragma once
// A binary cache of parsed profile suites (issue 15). Parsing ramsis-image (11.5 MB of
// text, 1.65M samples) and keeping its samples in fresh memory cost most of a short
// `sloserve sim`; the cache holds the parsed sample lists (measurement order, sorted, mean)
// in one file that is mapped read-only, so a run touches only the pages of the lists it
// reads. A cache file is named and validated by the size and hash of the source text;
// it is written once, atomically (temporary file + rename), like the policy-set cache,
// and the dir keeps the kKeptSuiteCaches most recently used files.
// Format and rules: docs/profiles.md#suite-cache.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

// How many suite caches a cache dir keeps (the most recently written or read; ~26 MB
// each for ramsis-image): older ones are deleted after each write.
inline constexpr size_t kKeptSuiteCaches = 8;

// Sources smaller than this are parsed directly (parsing them is as fast as the cache).
inline constexpr size_t kMinCachedSuiteBytes = size_t{1} << 20;

// $SLOSERVE_CACHE_DIR/profiles if set, else ~/.cache/sloserve/profiles, else
// /tmp/sloserve-cache/profiles; "" (no cache) when $SLOSERVE_PROFILE_CACHE is "off".
std::string DefaultProfileCacheDir();
// Hash of a suite's source text (with its size, the cache's key).
uint64_t HashSuiteText(std::string_view text);
// <dir>/<16 hex digits of the hash>-<size>.profc
std::string SuiteCachePath(const std::string& dir, std::string_view text);

// ParseProfileText through the cache in `dir` (no cache when `dir` is empty or the text is
// smaller than `min_bytes`). The suite is the same either way. A cache file that is
// missing, stale or unreadable is rewritten from the parse; failing to write it is not an
// error (the parsed suite is returned). *from_cache (optional) tells which happened.
StatusOr<ProfileSuite> ParseProfileTextCached(std::string_view text, const std::string& origin,
                                              const std::string& dir,
                                              size_t min_bytes = kMinCachedSuiteBytes,
                                              bool* from_cache = nullptr);

// The two halves, for tests. WriteSuiteCache stores `suite`, parsed from `text`.
Status WriteSuiteCache(const std::string& path, std::string_view text, const ProfileSuite& suite);
// NOT_FOUND when there is no file; FAILED_PRECONDITION when it is not a cache of `text`
// (other format or version, other source, truncated, inconsistent).
StatusOr<ProfileSuite> ReadSuiteCache(const std::string& path, std::string_view text,
                                      const std::string& origin);

}  // namespace sloserve
