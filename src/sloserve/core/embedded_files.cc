#include "sloserve/core/embedded_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "sloserve/core/read_file.h"

namespace sloserve {

const std::vector<EmbeddedFile>& EmbeddedFiles() {
  static const std::vector<EmbeddedFile>* files = [] {
    auto* v = new std::vector<EmbeddedFile>(embedded_internal::Table());
    std::sort(v->begin(), v->end(),
              [](const EmbeddedFile& a, const EmbeddedFile& b) { return a.name < b.name; });
    return v;
  }();
  return *files;
}

const EmbeddedFile* FindEmbeddedFile(std::string_view name) {
  const std::vector<EmbeddedFile>& files = EmbeddedFiles();
  auto it = std::lower_bound(files.begin(), files.end(), name,
                             [](const EmbeddedFile& f, std::string_view n) { return f.name < n; });
  return it != files.end() && it->name == name ? &*it : nullptr;
}

StatusOr<std::string> ReadFileOrEmbedded(const std::string& path, const std::string& what) {
  if (std::string_view(path).starts_with(kEmbeddedPrefix)) {
    const EmbeddedFile* f = FindEmbeddedFile(std::string_view(path).substr(kEmbeddedPrefix.size()));
    if (!f) return NotFoundError("no embedded " + what + " '" + path + "'");
    return std::string(f->data);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return InvalidArgumentError(what + " '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open " + what + " '" + path + "'");
  return ReadStreamBounded(in, path, what, kMaxInputFileBytes);
}

}  // namespace sloserve
