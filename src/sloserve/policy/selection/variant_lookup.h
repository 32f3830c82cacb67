#pragma once
// Variant names given in selection policy options (`fixed` `variant`, `ramsis`,
// `jellyfish_plus` and `model_switching` `variants`), looked up in the suite with an
// error that says which policy and option named it, and which names would do.
#include <string>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"

namespace sloserve {

class ProfileSuite;

// The variant called `name`. Fails unless it is in the suite or, with `same_task`, unless
// it is a variant of `task`: "selection policy 'fixed': option 'variant': variant
// 'resnet5' is not in task 'image' of suite ramsis-image (did you mean 'resnet50'?
// variants: ...)", listing the variants of `task`.
StatusOr<VariantId> FindOptionVariant(const ProfileSuite& suite, TaskId task,
                                      const std::string& policy, const std::string& option,
                                      const std::string& name, bool same_task);

}  // namespace sloserve
