#include "sloserve/core/read_file.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace sloserve {
namespace {

// "8 MiB", "512 KiB", "100 bytes": the limit as people say it.
std::string SizeText(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

StatusOr<std::string> ReadStreamBounded(std::istream& in, const std::string& name,
                                        const std::string& what, size_t max_bytes) {
  std::string out;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    if (out.size() + static_cast<size_t>(in.gcount()) > max_bytes) {
      return InvalidArgumentError(name + ": " + what + " larger than " + SizeText(max_bytes) +
                                  " (the limit)");
    }
    out.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return UnavailableError(name + ": error reading " + what);
  return out;
}

StatusOr<std::string> ReadFileBounded(const std::string& path, const std::string& what,
                                      size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgumentError(path + ": is a directory, not a " + what);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open " + what);
  return ReadStreamBounded(in, path, what, max_bytes);
}

}  // namespace sloserve
