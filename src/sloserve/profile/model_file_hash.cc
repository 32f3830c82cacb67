#include "sloserve/profile/model_file_hash.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "sloserve/profile/suite_cache.h"

namespace sloserve {

StatusOr<uint64_t> HashModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open model file " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return UnavailableError("cannot read model file " + path);
  return HashSuiteText(bytes);
}

std::string ModelHashHex(uint64_t hash) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace sloserve
