#pragma once
// Online evaluation of a heterogeneous configuration, simulated: the allowable
// throughput (allowable_throughput.h) of a base run with its `hardware` set to the
// configuration's mix. This is the f(x) of Kairos+' Algorithm 1 and of the search
// baselines; every value is cached, so a search that revisits a configuration (or a
// second search over the same space) pays nothing, and an exhaustive table can be
// saved and reloaded (the ground truth of docs/kairos-planning.md).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sloserve/config/run_spec.h"
#include "sloserve/core/mutex.h"
#include "sloserve/core/status.h"
#include "sloserve/policy/planning/instance_configs.h"
#include "sloserve/profile/profile.h"
#include "sloserve/sim/allowable_throughput.h"

namespace sloserve {

class SimulatedConfigEvaluator {
 public:
  // `start_hint` (optional) gives the first probed rate per configuration (e.g. half its
  // upper bound), which saves the doubling probes; otherwise options.start_qps.
  SimulatedConfigEvaluator(RunSpec base, const ProfileSuite& suite, ConfigSpace space,
                           ThroughputSearchOptions options,
                           std::function<double(const InstanceCounts&)> start_hint = {});

  // Allowable throughput of `counts` (cached; thread-safe).
  StatusOr<double> Evaluate(const InstanceCounts& counts) EXCLUDES(mu_);
  // Evaluates every configuration not cached yet on `jobs` threads; `progress(done,
  // total)` is called after each (from worker threads, serialised).
  Status EvaluateAll(const std::vector<InstanceCounts>& configs, int jobs,
                     const std::function<void(size_t, size_t)>& progress = {});

  // Simulated configurations so far (cache misses), not counting loaded ones.
  size_t simulated() const EXCLUDES(mu_);
  std::map<InstanceCounts, double> cache() const EXCLUDES(mu_);

  // A cache file is CSV: "# <fingerprint>", a header "<type>,...,allowable_qps", then
  // one line per configuration (instance counts by type, then the value); the
  // fingerprint names everything the values depend on, and a file whose fingerprint
  // differs is refused rather than silently mixed in. A missing file is not an error.
  Status LoadCache(const std::string& path) EXCLUDES(mu_);
  Status SaveCache(const std::string& path) const EXCLUDES(mu_);
  std::string Fingerprint() const;

 private:
  RunSpec base_;
  const ProfileSuite& suite_;
  ConfigSpace space_;
  ThroughputSearchOptions options_;
  std::function<double(const InstanceCounts&)> start_hint_;
  mutable Mutex mu_;
  std::map<InstanceCounts, double> cache_ GUARDED_BY(mu_);
  size_t simulated_ GUARDED_BY(mu_) = 0;
};

}  // namespace sloserve
