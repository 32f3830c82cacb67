#include "profile_freshness.h"

#include "sloserve/profile/model_file_hash.h"

namespace sloserve::cli {

Status CheckProfileFreshness(const ProfileFreshnessCheck& c) {
  // --out: without it a measurement never replaces an existing profile (it writes a new file).
  const std::string remeasure = "sloserve profile measure --model-repository " + c.repository_dir +
                                " --out " + c.profile_path;
  std::string stale;
  std::vector<std::string> unhashed;
  for (const auto& [variant, path] : c.model_files) {
    const std::optional<VariantId> v = c.suite->FindVariant(variant);
    if (!v) continue;  // not profiled: the engine never schedules it
    const std::optional<uint64_t> recorded = c.suite->ModelHash(*v);
    if (!recorded) {
      unhashed.push_back(variant);
      continue;
    }
    ASSIGN_OR_RETURN(uint64_t now, HashModelFile(path));
    if (now != *recorded) {
      stale += (stale.empty() ? "" : "; ") + std::string("variant ") + variant + ": " + path +
               " (hash " + ModelHashHex(now) + ") is not the file profiled (hash " +
               ModelHashHex(*recorded) + ")";
    }
  }
  if (!unhashed.empty() && c.warn) {
    std::string list;
    for (const std::string& v : unhashed) list += (list.empty() ? "" : ", ") + v;
    c.warn("warning: " + c.profile_path + " records no model file hash for " + list +
           " (measured by an older sloserve): a changed model.pt cannot be detected; re-measure "
           "with `" +
           remeasure + "`");
  }
  if (stale.empty()) return OkStatus();
  const std::string message =
      c.profile_path + " is stale: " + stale + ". Re-measure with `" + remeasure + "`";
  if (!c.warn_only) {
    return FailedPreconditionError(message + " (or serve it anyway with --allow-stale-profile)");
  }
  if (c.warn) c.warn("warning: " + message + " (serving anyway: --allow-stale-profile)");
  return OkStatus();
}

}  // namespace sloserve::cli
