#pragma once
// Policy sets: policies across a load range, refined until the expected accuracies of
// adjacent loads differ by at most a threshold, with an on-disk cache
// (docs/ramsis-mdp.md#policy-sets). Offline only: may use threads.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "sloserve/mdp/policy.h"

namespace sloserve::mdp {

// Called as each policy is generated (from worker threads, one call at a time): done so
// far, the total known so far (later refinement rounds may add more), and the policy.
using PolicySetProgress = std::function<void(int done, int total, const Policy& last)>;

struct PolicySetOptions {
  double min_qps = 0;
  double max_qps = 0;
  // Adjacent expected accuracies (per satisfied query) differ by at most this fraction
  // (0.01 = 1 percentage point of accuracy).
  double accuracy_step = 0.01;
  // Stop splitting an interval narrower than this (qps); 0: (max - min) / 1024.
  double min_gap_qps = 0;
  int threads = 1;
  // Set (from any thread) to stop a generation early: no new MDP is started and the
  // generation returns UNAVAILABLE, so a server shutting down does not wait for it.
  const std::atomic<bool>* cancel = nullptr;
};

// Policies sorted by load, from min_qps to max_qps.
StatusOr<std::vector<Policy>> GeneratePolicySet(const ProfileSuite& suite, const MdpOptions& base,
                                                const PolicySetOptions& set,
                                                const PolicySetProgress& progress = nullptr);
// The brief's shape: GeneratePolicySet(suite, base, min, max, step, progress).
StatusOr<std::vector<Policy>> GeneratePolicySet(const ProfileSuite& suite, const MdpOptions& base,
                                                double min_qps, double max_qps,
                                                double accuracy_step = 0.01,
                                                const PolicySetProgress& progress = nullptr);

// Key of a set: CacheKey without load, plus the load range and step.
StatusOr<std::string> PolicySetKey(const ProfileSuite& suite, const MdpOptions& base,
                                   const PolicySetOptions& set);
// The default cache dir: $SLOSERVE_CACHE_DIR if set, else ~/.cache/sloserve/mdp, else
// /tmp/sloserve-cache/mdp (the same as the ramsis selection policy's default).
std::string DefaultPolicyCacheDir();
// Cache file of a key: <dir>/<16 hex digits of FNV-1a(key)>.mdpset.
std::string PolicySetCachePath(const std::string& cache_dir, const std::string& key);

// How many policy sets a cache dir keeps (the most recently saved or loaded, ~0.5 MB
// each): older ones are deleted after each save by LoadOrGeneratePolicySet.
inline constexpr size_t kKeptPolicySets = 64;

// A policy-set file is read whole up to this size (a set is about 0.5 MB).
inline constexpr size_t kMaxPolicySetBytes = size_t{256} << 20;

// Writes the set atomically (temporary file + rename).
Status SavePolicySet(const std::string& path, const std::string& set_key,
                     const std::vector<Policy>& policies);
StatusOr<std::vector<Policy>> LoadPolicySet(const std::string& path,
                                            std::string* set_key = nullptr);
// OK when every variant the set's policies name is the suite's variant of that name and
// id; else an error naming the policy's variant. The key names the variants, but a file
// edited by hand or damaged keeps its key line.
Status CheckPolicySetVariants(const std::vector<Policy>& set, const ProfileSuite& suite);
// The cached set (in cache_dir, or shipped with sloserve) if its key matches and its
// variants are the suite's, else NOT_FOUND; generates nothing.
StatusOr<std::vector<Policy>> LoadCachedPolicySet(const ProfileSuite& suite, const MdpOptions& base,
                                                  const PolicySetOptions& set,
                                                  const std::string& cache_dir);
// Reads the cached set if its key matches, else generates and writes it (creating dir).
// *from_cache (optional) tells which happened.
StatusOr<std::vector<Policy>> LoadOrGeneratePolicySet(const ProfileSuite& suite,
                                                      const MdpOptions& base,
                                                      const PolicySetOptions& set,
                                                      const std::string& cache_dir,
                                                      const PolicySetProgress& progress = nullptr,
                                                      bool* from_cache = nullptr);

// The lowest-load policy whose load covers qps (load_qps >= qps); nullptr if none does.
const Policy* SelectPolicy(const std::vector<Policy>& sorted_by_load, double qps);

}  // namespace sloserve::mdp
