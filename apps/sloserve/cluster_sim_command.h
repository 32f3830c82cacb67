#pragma once
// `sloserve sim` on a model-aware placement experiment (a config with `cluster:`;
// docs/model-aware.md): runs it and prints one row per (sweep point, policy).
#include <string>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve::cli {

// True when the file at `path` is a model-aware placement experiment.
bool IsClusterConfigFile(const std::string& path);
// `records`: a CSV of every request of each row's first run ("" = none).
Status RunClusterSim(const std::string& path, const std::vector<std::string>& sets, bool json,
                     const std::string& records);

}  // namespace sloserve::cli
