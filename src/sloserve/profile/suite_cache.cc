#include "sloserve/profile/suite_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "sloserve/core/cache_files.h"
#include "sloserve/core/rng.h"

namespace sloserve {
namespace {

// File layout (native byte order, checked by kByteOrder): CacheHeader, the source's lines other
// than latency/load (parsed again on load: a few hundred lines), zero padding to 8 bytes,
// CacheEntry[entries], then the int64 sample words.
constexpr char kCacheMagic[8] = {'S', 'L', 'O', 'P', 'R', 'O', 'F', 'C'};
constexpr uint64_t kCacheVersion = 1;
constexpr uint64_t kByteOrder = 0x0102030405060708ULL;

struct CacheHeader {
  char magic[8];
  uint64_t version;
  uint64_t byte_order;
  uint64_t source_size;
  uint64_t source_hash;
  uint64_t skeleton_size;
  uint64_t entries;
  uint64_t data_offset;  // bytes from the start of the file
  uint64_t data_words;
};

struct CacheEntry {
  uint32_t table;  // ProfileSuite::SampleTable
  uint32_t hardware;
  uint32_t variant;
  int32_t rows;
  uint64_t count;
  int64_t mean_us;
  uint64_t samples_word;  // index of the first measurement-order sample in the data
  uint64_t sorted_word;   // of the first sorted one (== samples_word when they agree)
};

size_t PadTo8(size_t n) {
  return (n + 7) & ~size_t{7};
}

// The source without its sample lines (those the parser reads as "latency" or "load"
// records). Only parsed sources are cached, so every such line has fields after the keyword.
std::string SkeletonText(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const size_t b = line.find_first_not_of(" \t");
    std::string_view record;
    if (b != std::string_view::npos) {
      const size_t e = line.find_first_of(" \t", b);
      record = line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
    }
    if (record != "latency" && record != "load") {
      out.append(line);
      out += '\n';
    }
    pos = end + 1;
  }
  return out;
}

// A read-only mapping of a whole file; the sample spans of a cached suite point into it.
class CacheMapping {
 public:
  CacheMapping(const void* data, size_t size) : data_(data), size_(size) {}
  ~CacheMapping() { munmap(const_cast<void*>(data_), size_); }
  CacheMapping(const CacheMapping&) = delete;
  CacheMapping& operator=(const CacheMapping&) = delete;
  const char* bytes() const { return static_cast<const char*>(data_); }
  size_t size() const { return size_; }

 private:
  const void* data_;
  size_t size_;
};

StatusOr<std::shared_ptr<const CacheMapping>> MapCacheFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFoundError(path + ": no suite cache file");
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(CacheHeader))) {
    close(fd);
    return FailedPreconditionError(path + ": suite cache file too short");
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);  // the mapping stays valid
  if (data == MAP_FAILED) return UnavailableError(path + ": cannot map suite cache file");
  return std::make_shared<const CacheMapping>(data, size);
}

}  // namespace

std::string DefaultProfileCacheDir() {
  if (const char* off = std::getenv("SLOSERVE_PROFILE_CACHE");
      off && std::strcmp(off, "off") == 0) {
    return "";
  }
  if (const char* dir = std::getenv("SLOSERVE_CACHE_DIR"); dir && *dir) {
    return std::string(dir) + "/profiles";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/sloserve/profiles";
  }
  return "/tmp/sloserve-cache/profiles";
}

uint64_t HashSuiteText(std::string_view text) {
  // Four independent multiply-xor lanes over 8-byte words (a few ms for 11.5 MB, where
  // byte-wise FNV-1a takes ~4x longer), folded with the size and the tail.
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t lane[4] = {1, 2, 3, 4};
  const char* p = text.data();
  const size_t n = text.size();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w = 0;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kMul;
      lane[k] ^= lane[k] >> 29;
    }
  }
  uint64_t h = MixSeed(n);
  for (uint64_t l : lane) h = MixSeed(h ^ l);
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ULL;
  return MixSeed(h);
}

namespace {

std::string CachePathOfHash(const std::string& dir, uint64_t hash, size_t size) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%016llx-%zu.profc", static_cast<unsigned long long>(hash), size);
  return (std::filesystem::path(dir) / buf).string();
}

}  // namespace

std::string SuiteCachePath(const std::string& dir, std::string_view text) {
  return CachePathOfHash(dir, HashSuiteText(text), text.size());
}

Status WriteSuiteCache(const std::string& path, std::string_view text, const ProfileSuite& suite) {
  const std::string skeleton = SkeletonText(text);
  std::vector<CacheEntry> entries;
  std::vector<std::span<const int64_t>> lists;  // data, in word order
  uint64_t words = 0;
  auto place = [&](std::span<const int64_t> s) {
    lists.push_back(s);
    words += s.size();
    return words - s.size();
  };
  suite.ForEachDistribution([&](ProfileSuite::SampleTable table, HardwareId hw, VariantId v,
                                int rows, const LatencyDistribution& d) {
    CacheEntry e{};
    e.table = static_cast<uint32_t>(table);
    e.hardware = hw;
    e.variant = v;
    e.rows = rows;
    e.count = d.size();
    e.mean_us = d.mean_us();
    e.samples_word = place(d.samples_us());
    e.sorted_word = d.sorted_samples_us().data() == d.samples_us().data()
                        ? e.samples_word
                        : place(d.sorted_samples_us());
    entries.push_back(e);
  });
  CacheHeader h{};
  std::memcpy(h.magic, kCacheMagic, sizeof(kCacheMagic));
  h.version = kCacheVersion;
  h.byte_order = kByteOrder;
  h.source_size = text.size();
  h.source_hash = HashSuiteText(text);
  h.skeleton_size = skeleton.size();
  h.entries = entries.size();
  h.data_offset =
      sizeof(CacheHeader) + PadTo8(skeleton.size()) + entries.size() * sizeof(CacheEntry);
  h.data_words = words;

  // Processes and threads may load the same suite at once: the file appears whole or not.
  return WriteFileAtomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    out.write(skeleton.data(), static_cast<std::streamsize>(skeleton.size()));
    const char zeros[8] = {};
    out.write(zeros, static_cast<std::streamsize>(PadTo8(skeleton.size()) - skeleton.size()));
    out.write(reinterpret_cast<const char*>(entries.data()),
              static_cast<std::streamsize>(entries.size() * sizeof(CacheEntry)));
    for (std::span<const int64_t> s : lists) {
      out.write(reinterpret_cast<const char*>(s.data()),
                static_cast<std::streamsize>(s.size() * sizeof(int64_t)));
    }
  });
}

namespace {

StatusOr<ProfileSuite> ReadSuiteCacheOfHash(const std::string& path, std::string_view text,
                                            uint64_t text_hash, const std::string& origin) {
  ASSIGN_OR_RETURN(std::shared_ptr<const CacheMapping> map, MapCacheFile(path));
  auto stale = [&path](const std::string& what) {
    return FailedPreconditionError(path + ": not a suite cache of this source: " + what);
  };
  CacheHeader h{};
  std::memcpy(&h, map->bytes(), sizeof(h));
  if (std::memcmp(h.magic, kCacheMagic, sizeof(kCacheMagic)) != 0) return stale("bad magic");
  if (h.version != kCacheVersion || h.byte_order != kByteOrder) return stale("other format");
  if (h.source_size != text.size() || h.source_hash != text_hash) {
    return stale("other source");
  }
  const uint64_t max_entries = map->size() / sizeof(CacheEntry);
  if (h.skeleton_size > map->size() || h.entries > max_entries ||
      h.data_offset !=
          sizeof(CacheHeader) + PadTo8(h.skeleton_size) + h.entries * sizeof(CacheEntry) ||
      h.data_offset > map->size() || (map->size() - h.data_offset) / 8 != h.data_words ||
      (map->size() - h.data_offset) % 8 != 0) {
    return stale("sizes do not match the file");
  }
  ASSIGN_OR_RETURN(
      ProfileSuite suite,
      ParseProfileText(std::string_view(map->bytes() + sizeof(CacheHeader), h.skeleton_size),
                       origin));
  const char* entry_bytes = map->bytes() + sizeof(CacheHeader) + PadTo8(h.skeleton_size);
  const auto* data = reinterpret_cast<const int64_t*>(map->bytes() + h.data_offset);
  for (uint64_t i = 0; i < h.entries; ++i) {
    CacheEntry e{};
    std::memcpy(&e, entry_bytes + i * sizeof(CacheEntry), sizeof(CacheEntry));
    if (e.table > static_cast<uint32_t>(ProfileSuite::SampleTable::kService) ||
        e.hardware >= suite.hardware().size() || e.variant >= suite.variants().size() ||
        e.rows < 1 || e.count < 1 || e.count > h.data_words ||
        e.samples_word > h.data_words - e.count || e.sorted_word > h.data_words - e.count) {
      return stale("entry " + std::to_string(i) + " out of range");
    }
    const std::span<const int64_t> samples(data + e.samples_word, e.count);
    const std::span<const int64_t> sorted(data + e.sorted_word, e.count);
    suite.RestoreDistribution(static_cast<ProfileSuite::SampleTable>(e.table), e.hardware,
                              e.variant, e.rows,
                              LatencyDistribution::FromStored(samples, sorted, e.mean_us, map));
  }
  return suite;
}

}  // namespace

StatusOr<ProfileSuite> ReadSuiteCache(const std::string& path, std::string_view text,
                                      const std::string& origin) {
  return ReadSuiteCacheOfHash(path, text, HashSuiteText(text), origin);
}

StatusOr<ProfileSuite> ParseProfileTextCached(std::string_view text, const std::string& origin,
                                              const std::string& dir, size_t min_bytes,
                                              bool* from_cache) {
  if (from_cache) *from_cache = false;
  if (dir.empty() || text.size() < min_bytes) return ParseProfileText(text, origin);
  const uint64_t hash = HashSuiteText(text);
  const std::string path = CachePathOfHash(dir, hash, text.size());
  if (auto cached = ReadSuiteCacheOfHash(path, text, hash, origin); cached.ok()) {
    if (from_cache) *from_cache = true;
    TouchCacheFile(path);  // recently used: kept by the pruning below
    return cached;
  }
  ASSIGN_OR_RETURN(ProfileSuite suite, ParseProfileText(text, origin));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  // Best effort: the suite is parsed either way.
  if (!ec && WriteSuiteCache(path, text, suite).ok()) {
    PruneCacheFiles(dir, ".profc", kKeptSuiteCaches);
  }
  return suite;
}

}  // namespace sloserve
