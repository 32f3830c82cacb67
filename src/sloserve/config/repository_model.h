#pragma once
// A model of `models:` served from a LibTorch model repository (`models[i].repository`,
// docs/torch.md "In a composed deployment"): where its measured profile is. The config
// layer only finds files (no LibTorch): `sim` schedules with the profile, and `serve`
// loads the repository and runs the model's variants with LibTorch.
#include <string>

#include "sloserve/core/status.h"

namespace sloserve {

// The profile `serve --model-repository DIR` reads for `task`: DIR/<task>/profile.prof (a
// repository of one task), else DIR/profile.prof (several tasks measured together).
// Errors name `origin` ("models[5].repository"): DIR is not a directory, DIR has no
// directory `task` (listing the ones it has), or no profile was measured (naming the
// command that measures it).
StatusOr<std::string> RepositoryProfilePath(const std::string& dir, const std::string& task,
                                            const std::string& origin);

}  // namespace sloserve
