#pragma once
// Shared machinery of the load-granular model selectors compared with RAMSIS
// (Jellyfish+ and ModelSwitching, RAMSIS section 7): an arrival-rate monitor, the
// adaptive batch size of a variant (the largest profiled batch whose latency quantile
// fits a budget), and a per-SLO cache of the variants ranked by accuracy. They switch
// variants only when the anticipated load changes, never per batch.
#include <map>
#include <vector>

#include "sloserve/policy/interfaces.h"
#include "sloserve/workload/load_monitor.h"

namespace sloserve {

// Largest profiled batch of (hw, v) whose `quantile` latency is <= budget; 0 if none.
int AdaptiveBatch(const ProfileSuite& suite, HardwareId hw, VariantId v, Duration budget,
                  double quantile);

struct LoadGranularOptions {
  Duration window = Millis(500);      // load monitor window
  double quantile = 0.95;             // latency statistic of the profile
  std::vector<std::string> variants;  // candidates (empty: every variant of the task)
  std::string policy;                 // registered name, for errors (set by Create)
};
StatusOr<LoadGranularOptions> ParseLoadGranularOptions(const PolicyParams& params);

class LoadGranularSelection : public SelectionPolicy {
 public:
  explicit LoadGranularSelection(LoadGranularOptions options)
      : options_(options), monitor_(LoadMonitor::Options{options.window, kTimeZero}) {}
  Status Init(const PolicyContext& ctx) override;
  void OnArrival(const Query&, TimePoint now) override { monitor_.Record(now); }
  bool follows_load() const override { return true; }
  SelectionDecision Choose(const WorkerView& worker, const QueueView& queue, const Query& head,
                           TimePoint now) final;

 protected:
  struct Candidate {
    VariantId variant;
    int batch;  // adaptive batch size under this SLO
    double accuracy;
  };
  // The variant for `load_qps` among `ranked` (most accurate first; all have batch >= 1).
  virtual SelectionDecision Pick(const std::vector<Candidate>& ranked, HardwareId hw, Duration slo,
                                 double load_qps) = 0;
  const ProfileSuite& suite() const { return *suite_; }
  int workers() const { return workers_; }
  const LoadGranularOptions& options() const { return options_; }

 private:
  const std::vector<Candidate>& Ranked(HardwareId hw, TaskId task, Duration slo);

  LoadGranularOptions options_;
  LoadMonitor monitor_;
  const ProfileSuite* suite_ = nullptr;
  std::vector<VariantId> allowed_;  // from options.variants
  int workers_ = 1;
  std::map<std::tuple<HardwareId, TaskId, int64_t>, std::vector<Candidate>> ranked_;
};

}  // namespace sloserve
