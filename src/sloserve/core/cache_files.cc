#include "sloserve/core/cache_files.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

namespace sloserve {
namespace {

namespace fs = std::filesystem;

// "<path>.tmp.<pid>.<n>": unique per process and call; PruneCacheFiles recognises it.
constexpr std::string_view kTempMarker = ".tmp.";

}  // namespace

Status WriteFileAtomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + std::string(kTempMarker) + std::to_string(getpid()) + "." +
                          std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return UnavailableError("cannot write " + tmp);
    write(out);
    out.flush();
    if (!out.good()) {
      out.close();
      std::remove(tmp.c_str());
      return UnavailableError("error writing " + tmp);
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return UnavailableError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
  return OkStatus();
}

void TouchCacheFile(const std::string& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

size_t PruneCacheFiles(const std::string& dir, std::string_view extension, size_t keep_newest) {
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  std::vector<fs::path> stale_temps;
  const auto stale_before = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec) || entry_ec) continue;
    const std::string name = it->path().filename().string();
    const fs::file_time_type written = it->last_write_time(entry_ec);
    if (entry_ec) continue;
    if (name.find(kTempMarker) != std::string::npos) {
      if (written < stale_before) stale_temps.push_back(it->path());
    } else if (name.size() > extension.size() && name.ends_with(extension)) {
      entries.emplace_back(written, it->path());
    }
  }
  size_t deleted = 0;
  for (const fs::path& p : stale_temps) deleted += fs::remove(p, ec) ? 1 : 0;
  if (entries.size() <= keep_newest) return deleted;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep_newest; i < entries.size(); ++i) {
    deleted += fs::remove(entries[i].second, ec) ? 1 : 0;
  }
  return deleted;
}

}  // namespace sloserve
