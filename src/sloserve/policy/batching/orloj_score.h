#pragma once
// ORLOJ's priority score (section 4.1, Eq. 1-2, appendix B), precomputed per
// (app, batch size) for one (hardware, variant). See orloj.h for the scheduler.
//
// For a request r of app a considered for a batch of size k, L is the batch execution
// time L_B = c0 + c1 k max(L_r, L_pool^(k-1)) (sections 4.2: r's own distribution, the
// other k-1 slots drawn from the variant's pooled distribution since the batch's other
// members are unknown, section 4.3). E[L] is the mean batch time over all apps (pooled
// for all k slots, section 4.3), so it only depends on k. The distribution of L is
// re-binned into `bins` equal-width bins [l1, l2) with density h (mass / width: Eq. 2
// integrates the density against the anticipated delay's tail). For one cost step (miss
// the deadline D, cost c) and anticipated delay ~ Exp(b):
//
//   p_i(t) = K h (e^{b l2} - e^{b l1}) e^{-b (D - t)}      t <  D - l2
//          = K h - K h e^{b l1} e^{-b (D - t)}             D - l2 <= t < D - l1
//          = 0                                             t >= D - l1,   K = c / (E[L] b)
//
// summed over bins and over cost steps (appendix B: a multi-step cost is a sum of
// single steps with deadlines D + offset_j and cost increments c_j). With s = D - t and
// j the bin holding s, the score is alpha_rel(j) e^{-b s} + beta(j): it changes form
// only when s crosses a bin edge (a *milestone*). Exponentials are taken relative to the
// top edge so nothing overflows.
//
// Static models (no exec_hist for the variant): L for batch size k is the profile's
// latency distribution at k, the same for every app.
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/exec_time_model.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct CostStep {
  double offset_ms = 0;  // deadline = request deadline + offset
  double cost = 1;       // cost increment when missing it
};

struct OrlojScoreOptions {
  double b_per_ms = 1e-4;
  double feasible_quantile = 0.5;  // EstimateBatchLatency = this quantile of L
  int bins = 32;
  std::vector<CostStep> steps = {CostStep{}};
};

class OrlojScoreTable {
 public:
  // `batch_sizes` ascending, starting at 1. Apps: table.apps(); slot apps().size() is the
  // pooled distribution (unknown apps).
  static StatusOr<OrlojScoreTable> Build(const ProfileSuite& suite, const ExecTimeTable& table,
                                         HardwareId hw, VariantId v,
                                         const std::vector<int>& batch_sizes,
                                         const OrlojScoreOptions& options);

  int num_slots() const { return num_slots_; }
  int num_sizes() const { return static_cast<int>(sizes_.size()); }
  const std::vector<int>& batch_sizes() const { return sizes_; }
  bool dynamic() const { return dynamic_; }
  // Slot of an app id (the pooled slot when unknown; *unknown set accordingly).
  int SlotOf(AppId app, bool* unknown) const;
  // Point estimate of the batch latency (µs) for slot and size index.
  double EstimateUs(int slot, int k) const { return Entry(slot, k).est_us; }
  double MeanBatchUs(int k) const { return mean_us_[static_cast<size_t>(k)]; }
  // Bin index of slack `s_us` for one cost step: -1 (below every edge) .. bins (above).
  int BinOf(int slot, int k, double s_us) const;
  // The score's line coefficients for bins `j[step]`, with deadline D and time base:
  // score(t) = alpha * e^{b (t - base)} + beta.
  void Line(int slot, int k, const int* j, TimePoint deadline, TimePoint base, double* alpha,
            double* beta) const;
  // Next time at which bin j of a step (deadline D + offset) changes; kTimeInfinite if none.
  TimePoint NextMilestone(int slot, int k, int step, int j, TimePoint deadline) const;
  const OrlojScoreOptions& options() const { return options_; }

 private:
  struct EntryData {
    std::vector<double> edges;  // bins + 1 edges, µs
    std::vector<double> mass;   // per bin: density (mass / width in ms)
    std::vector<double>
        prefix;                 // prefix[j] = sum_{i<j} h_i (e^{b(l2_i - top)} - e^{b(l1_i - top)})
    std::vector<double> lower;  // h_j e^{b(l1_j - top)}
    double top_us = 0;          // last edge
    double k_factor = 0;        // c / (E[L] b) for cost 1
    double est_us = 0;
  };
  const EntryData& Entry(int slot, int k) const {
    return entries_[static_cast<size_t>(slot) * sizes_.size() + static_cast<size_t>(k)];
  }
  static EntryData MakeEntry(const ExecCdf& batch, double mean_us, const OrlojScoreOptions& o);

  OrlojScoreOptions options_;
  std::vector<int> sizes_;
  int num_slots_ = 1;
  bool dynamic_ = false;
  std::vector<double> mean_us_;
  std::vector<EntryData> entries_;  // [slot][size]
  std::vector<bool> has_app_;       // [app]: a histogram exists for this variant
};

}  // namespace sloserve
