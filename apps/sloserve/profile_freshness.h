#pragma once
// `serve --model-repository`: is the profile it schedules with measured on the model files
// it serves? `profile measure` records each model file's hash (model_hash records); a
// variant whose model.pt changed since is refused (a stale profile schedules with another
// model's latencies), or only warned about with --allow-stale-profile. A profile without
// hashes (measured before they were recorded) is warned about, not refused.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve::cli {

struct ProfileFreshnessCheck {
  const ProfileSuite* suite = nullptr;
  std::string profile_path;                                      // named in the messages
  std::string repository_dir;                                    // for the command to run
  std::vector<std::pair<std::string, std::string>> model_files;  // variant, model path
  bool warn_only = false;                                        // --allow-stale-profile
  std::function<void(const std::string&)> warn;
};

// FailedPrecondition naming each stale variant, its file and `sloserve profile measure ...`.
Status CheckProfileFreshness(const ProfileFreshnessCheck& check);

}  // namespace sloserve::cli
