#include "sloserve/policy/selection/variant_lookup.h"

#include <vector>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

StatusOr<VariantId> FindOptionVariant(const ProfileSuite& suite, TaskId task,
                                      const std::string& policy, const std::string& option,
                                      const std::string& name, bool same_task) {
  const std::optional<VariantId> v = suite.FindVariant(name);
  if (v && (!same_task || suite.variants()[*v].task == task)) return *v;
  std::vector<std::string> names;
  for (VariantId id : suite.VariantsOfTask(task)) names.push_back(suite.variants()[id].name);
  const std::string& task_name = suite.tasks()[task].name;
  std::string where, listed = "variants";
  if (v) {  // in the suite, but of another task
    where = "is of task '" + suite.tasks()[suite.variants()[*v].task].name + "', not of task '" +
            task_name + "' served here";
  } else if (suite.tasks().size() == 1 || same_task) {
    where = "is not in task '" + task_name + "' of suite " + suite.name();
  } else {  // `fixed` takes one variant per task, of any task of the suite
    where = "is not in suite " + suite.name();
    listed = "variants of task '" + task_name + "'";
  }
  return NotFoundError("selection policy '" + policy + "': option '" + option + "': variant '" +
                       name + "' " + where + " (" + DidYouMean(name, names) + listed + ": " +
                       JoinNames(names) + ")");
}

}  // namespace sloserve
