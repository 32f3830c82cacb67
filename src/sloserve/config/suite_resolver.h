#pragma once
// Suite names as configs write them: an embedded suite ("ramsis-image"), a path to a
// .prof file, or a synthetic Pareto suite built on the fly from an embedded one:
// "synthetic:ramsis-image" (RAMSIS appendix E: its 9 Pareto models interpolated every
// 0.5 accuracy points, 60 models) or "synthetic:BASE:STEP:v1,v2,..." for another front.
#include <string>

#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

StatusOr<ProfileSuite> ResolveSuite(const std::string& name);

}  // namespace sloserve
