#pragma once
// ORLOJ batching: distribution-aware batching for dynamic DNNs (Yu, Sun, Tumanov et al.,
// "Orloj: Predictably Serving Unpredictable DNNs", sections 3-4, Algorithm 1, appendix B).
// Docs: docs/policies/orloj.md.
//
// Per worker, every pending request r sits in one priority queue Q_k per supported batch
// size k for which it is still feasible (t + EstimateBatchLatency(r, k) <= D_r), ranked by
// the time-varying score of orloj_score.h (step cost at the deadline, exponential
// anticipated delay with parameter b, summed per histogram bin of the batch-time
// distribution; E[L] over all apps of the variant). Each Q_k is a KineticMaxQueue
// (orloj_queue.h); scores change form only at milestones, which are kept in a time heap
// (Algorithm 1 lines 1-9). An iteration (NextBatch, when the worker is idle):
//   1. drops requests whose last feasible batch size is gone (lines 10-14: "timed out",
//      reported as drop reason `policy`),
//   2. takes the largest supported batch size k with |Q_k| >= k (lines 15-21; we read the
//      listing's "descending order" as: try the largest batch size first), and
//   3. pops the k best-scored requests of Q_k (line 22) and runs them.
// Batch sizes are 1 plus the variant's profiled batch sizes up to the selection's row cap.
//
// Assumptions: one variant per worker (from the selection policy, `fixed` by default),
// queries of one row each (larger ones are rejected as unservable), queries of another
// task than the variant's are rejected. Requests learn their distribution from their
// `app` (AppId i = i-th app of the suite's exec_hist records); an unknown app uses the
// variant's pooled distribution and is counted (unknown_app_queries()). A variant without
// exec_hist records is a static model: its batch latency is the profile's latency at k.
//
// Options (policy.<name>):
//   b                  anticipated-delay rate per ms (default 1e-4, as the paper)
//   feasible_quantile  quantile of the batch time used as EstimateBatchLatency (0.5)
//   score_bins         bins of each batch-time histogram (32)
//   cost_steps         multi-step cost "offset_ms:cost,..." (default "0:1": one step at
//                      the deadline; appendix B)
//   online_profile     learn the execution-time distributions from completions (false)
//   profile_refresh_s, profile_window_s, profile_sample_every, profile_min_samples,
//   profile_bins       its cadence and profiler (5, 600, 1, 30, 64); need online_profile
//   offline_scale      per-app factors "f0,f1,..." (one = all apps) applied to the offline
//                      histograms: a deliberately wrong profile, for experiments
//
// Online profile (section 3.2): OnBatchComplete records each finished request's time alone
// (an append); at most every profile_refresh_s it refreshes the profilers and, when one
// published a histogram, rebuilds the score tables from the learned distributions
// (OnlineExecTable) and makes every worker re-register its queue on its next decision.
// Nothing is rebuilt per query or per decision.
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

#include "sloserve/policy/batching/orloj_queue.h"
#include "sloserve/policy/batching/orloj_score.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/profile/online_exec_table.h"

namespace sloserve {

class OrlojBatching : public BatchingPolicy {
 public:
  struct Options {
    OrlojScoreOptions score;
    double rebase_exponent = 300;  // re-base the time origin when b (t - base) exceeds it
    bool online_profile = false;
    OnlineProfilerOptions profiler;
    Duration profile_refresh = Seconds(5);
    std::vector<double> offline_scale;  // empty: the offline histograms as profiled
  };
  static StatusOr<std::unique_ptr<BatchingPolicy>> Create(const PolicyParams& params,
                                                          std::unique_ptr<SelectionPolicy> sel);
  static StatusOr<std::vector<CostStep>> ParseCostSteps(const std::string& text);

  OrlojBatching(Options options, std::unique_ptr<SelectionPolicy> selection)
      : options_(std::move(options)), selection_(std::move(selection)) {}
  Status Init(const PolicyContext& ctx) override;
  void NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                 BatchDecision* out) override;
  void OnArrival(const Query& q, TimePoint now) override;
  void OnWorkersChanged(const std::vector<WorkerView>& workers) override {
    selection_->OnWorkersChanged(workers);
  }
  void OnBatchComplete(const BatchCompletion& c) override;

  // Diagnostics (also for tests): queries whose app had no histogram, and requests
  // dropped because no batch size could meet their deadline.
  int64_t unknown_app_queries() const { return unknown_apps_; }
  int64_t timed_out() const { return timed_out_; }
  size_t tracked(WorkerId w) const { return w < workers_.size() ? workers_[w].tracked : 0; }
  // The distributions scheduled with now (learned where the online profile has them).
  const ExecTimeTable& exec_times() const { return online_ ? online_->table() : exec_; }
  const OnlineExecTable* online_profile() const { return online_ ? &*online_ : nullptr; }
  int64_t profile_rebuilds() const { return profile_rebuilds_; }

 private:
  struct Pending {
    QueryId id;
    TimePoint deadline;
    AppId app;
    TaskId task;
    int32_t size;
  };
  struct Req {
    QueryId id = 0;
    TimePoint deadline{};
    int slot = 0;
    int feasible = 0;  // Q_0 .. Q_{feasible-1} hold it
    uint32_t gen = 0;
    bool live = false;
  };
  struct Event {
    TimePoint at;
    uint32_t req;
    uint32_t gen;
    bool operator>(const Event& o) const { return at > o.at; }
  };
  struct WorkerState {
    VariantId variant = kNoId;
    int max_rows = 0;  // the most rows a request may have to be batched here
    const OrlojScoreTable* table = nullptr;
    TimePoint base{};
    std::vector<KineticMaxQueue> queues;       // per size index
    std::vector<std::vector<uint32_t>> owner;  // [k][handle] -> request index
    std::vector<Req> reqs;
    std::vector<uint32_t> free;
    std::vector<KineticMaxQueue::Handle> handles;  // [r * nk + k]
    std::vector<int> bins;                         // [(r * nk + k) * steps + s]
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    size_t tracked = 0;
  };
  enum class AddResult { kAdded, kTimedOut, kReject };

  const OrlojScoreTable* TableFor(HardwareId hw, VariantId v, int max_rows);
  StatusOr<OrlojScoreTable> BuildTable(HardwareId hw, VariantId v, int max_rows) const;
  // After the online profile changed: new score tables, workers re-register their queues.
  void RebuildTables();
  void Reset(WorkerState& ws, const OrlojScoreTable* table, VariantId v, int max_rows,
             TimePoint now);
  AddResult Add(WorkerState& ws, const Pending& q, TimePoint now);
  void Remove(WorkerState& ws, uint32_t r);
  // Re-evaluates feasibility and milestones; false when r timed out (then removed).
  bool Refresh(WorkerState& ws, uint32_t r, TimePoint now, bool force_lines);
  void Schedule(WorkerState& ws, uint32_t r);
  void MaybeRebase(WorkerState& ws, TimePoint now);
  double X(const WorkerState& ws, TimePoint now) const;
  void Collect(const QueueView& queue, std::vector<std::pair<TimePoint, QueryId>>* keys,
               std::vector<uint32_t>* out);

  Options options_;
  std::unique_ptr<SelectionPolicy> selection_;
  const ProfileSuite* suite_ = nullptr;
  ExecTimeTable exec_;                     // offline (after offline_scale)
  std::optional<OnlineExecTable> online_;  // online_profile only
  TimePoint next_refresh_{};
  int64_t profile_rebuilds_ = 0;
  std::map<std::tuple<HardwareId, VariantId, int>, std::unique_ptr<OrlojScoreTable>> tables_;
  std::vector<WorkerState> workers_;
  std::vector<Pending> unplaced_;
  int64_t unknown_apps_ = 0;
  int64_t timed_out_ = 0;
  // Scratch (no allocation in the hot path once warm).
  std::vector<std::pair<TimePoint, QueryId>> take_keys_, drop_keys_, reject_keys_;
};

}  // namespace sloserve
