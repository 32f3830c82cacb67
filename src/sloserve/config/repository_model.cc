#include "sloserve/config/repository_model.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace sloserve {

StatusOr<std::string> RepositoryProfilePath(const std::string& dir, const std::string& task,
                                            const std::string& origin) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return NotFoundError("'" + origin + "': " + dir + " is not a directory (a model repository)");
  if (task.empty() || !fs::is_directory(fs::path(dir) / task, ec)) {
    std::vector<std::string> tasks;
    // increment(ec), not ++: the range-for's ++ throws filesystem_error on a read error.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (it->is_directory(entry_ec)) tasks.push_back(it->path().filename().string());
    }
    std::sort(tasks.begin(), tasks.end());
    std::string list;
    for (const std::string& t : tasks) list += (list.empty() ? "" : ", ") + t;
    return NotFoundError("'" + origin + "': " + dir + " has no task '" + task +
                         "' (its directories: " + (list.empty() ? "none" : list) + ")");
  }
  for (const fs::path& p :
       {fs::path(dir) / task / "profile.prof", fs::path(dir) / "profile.prof"}) {
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return FailedPreconditionError("'" + origin + "': " + dir + "/" + task +
                                 "/profile.prof does not exist; measure it first: sloserve "
                                 "profile measure --model-repository " +
                                 dir);
}

}  // namespace sloserve
