#pragma once
// `sloserve sim` on a model-aware placement experiment (a config with `cluster:`;
// docs/model-aware.md): runs it and prints one row per (sweep point, policy).
#include <string>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve::cli {

// Runs the experiment `text`, read from `path` (named in errors; the caller reads the file
// once: a pipe gives its text only once). `records`: a CSV of every request of each row's
// first run ("" = none).
Status RunClusterSim(const std::string& path, const std::string& text,
                     const std::vector<std::string>& sets, bool json, const std::string& records);

}  // namespace sloserve::cli
