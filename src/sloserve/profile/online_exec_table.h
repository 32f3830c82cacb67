#pragma once
// Execution-time distributions learned online over an offline profile (ORLOJ, section
// 3.2: "the execution time data will then be asynchronously picked up and accumulated by
// the scheduler periodically, completely off the critical path").
//
// One OnlineExecProfiler per dynamic variant records the execution times alone of
// sampled finished requests (Record: an append, called per completion). Refresh — called
// by the owner at its own cadence, never per decision — folds the samples and, when any
// profiler published a new histogram (its first `min_samples`, then at every window
// reset), rebuilds table(): the offline table with every learned (variant, app)
// histogram in place of the offline one and the pooled distributions recomputed. Pairs
// with fewer than `min_samples` samples keep the offline histogram. Only apps the offline
// profile knows are learned (unknown apps keep the pooled distribution, as in the
// executors); static variants (no exec_hist) are not learned.
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/exec_time_model.h"

namespace sloserve {

class OnlineExecTable {
 public:
  static StatusOr<OnlineExecTable> Create(ExecTimeTable offline, OnlineProfilerOptions options);

  // Cheap; ignored for static variants, unknown apps and negative (unknown) times.
  void Record(VariantId v, AppId app, Duration alone, TimePoint now);
  // True when table() changed.
  bool Refresh(TimePoint now);

  const ExecTimeTable& table() const { return table_; }
  const ExecTimeTable& offline() const { return offline_; }
  // (variant, app) pairs currently scheduled with a learned histogram.
  int learned_pairs() const { return learned_pairs_; }
  int64_t recorded() const { return recorded_; }

 private:
  OnlineExecTable(ExecTimeTable offline, std::vector<OnlineExecProfiler> profilers)
      : offline_(std::move(offline)), table_(offline_), profilers_(std::move(profilers)) {}
  ExecTimeTable offline_;
  ExecTimeTable table_;
  std::vector<OnlineExecProfiler> profilers_;  // [variant]; unused for static variants
  int learned_pairs_ = 0;
  int64_t recorded_ = 0;
};

}  // namespace sloserve
