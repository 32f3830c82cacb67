#pragma once
// The per-worker MDP of RAMSIS section 4, built from a profile suite and MdpOptions:
// slack levels, states, valid actions with rewards, and transition probabilities in a
// factored form that the solver and the evaluator share (docs/ramsis-mdp.md).
//
// States: index 0 = empty queue (its arrival action is folded: an epoch that ends with an
// empty queue continues at (1, SLO)); (n, j) for n = 1..N, j = slack level; last = full.
// Transitions of an action that takes the whole queue: the next queue holds only the
// arrivals during the action's latency tau; their count and the first one's slack depend on
// tau and on the round-robin phase x (central arrivals since the worker's last query), which
// is mixed over the state's phase weights w_s(x) (section 4.4, intervals A-D).
// An action leaving queries behind (variable batching, or a late action capped by the
// fastest variant's largest batch) uses kLeftover rows (see transitions.cc).
#include <cstdint>
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/mdp/options.h"

namespace sloserve {
class ProfileSuite;
}

namespace sloserve::mdp {

struct ModelVariant {
  VariantId id = kNoId;
  std::string name;
  double accuracy = 0;
  int max_batch = 0;                // min(profiled max batch, N)
  std::vector<int64_t> latency_us;  // [b - 1]: the quantile latency at batch b
  int64_t Latency(int b) const { return latency_us[b - 1]; }
};

// An action as the model sees it: a variant index into variants() and a batch size.
struct ModelAction {
  int variant = -1;  // -1: the empty state's arrival action
  int batch = 0;
};

// Arrivals during one latency tau: count and first-arrival slack, per phase x.
struct Kernel {
  int64_t tau_us = 0;
  // count[x * (N + 1) + m]: P(m worker arrivals during tau | phase x), m = 0..N.
  std::vector<double> count;
  // Whole-queue part (built only when an action takes the whole queue with this tau):
  bool has_slack = false;
  int nmax = 0;           // n' = 1..nmax stored
  int jlo = 0, jhi = -1;  // slack levels with mass
  // Row r = x * nmax + n' - 1 holds P(n' arrivals, first one's slack in level jlo + j' |
  // x) for j' in [band[2r], band[2r + 1]) of jw = jhi - jlo + 1: the entries >= 1e-30 (3-10x
  // fewer than jw; docs/benchmarks.md). Only bands are stored: p[offset[r] + j' - band[2r]].
  // Begins are multiples of 4 and ends multiples of 4 or jw, so a 4-way Dot over the band
  // adds the same products in the same order as over the whole row, less the tails, which
  // are negligible (< 1e-30 each).
  std::vector<double> p;
  std::vector<int> band;
  std::vector<int> offset;   // rows + 1 entries
  std::vector<double> p0;    // [x]: no arrival (next epoch starts at (1, SLO))
  std::vector<double> full;  // [x]: more than N arrivals
};

// One valid (state, action) pair with its factored transition.
struct Pair {
  ModelAction action;
  bool met = false;   // latency <= the state's slack level
  double reward = 0;  // accuracy * batch if met, else 0
  int kernel = -1;    // index into kernels()
  int leftover = -1;  // >= 0: index into leftovers() (the action leaves queries)
};

// The next state of a kLeftover pair: n'' = left + m, m ~ mdist (rest: full);
// head slack level ~ jdist over [jlo, jlo + jdist.size()).
struct Leftover {
  int left = 0;
  std::vector<double> mdist;
  double full = 0;
  int jlo = 0;
  std::vector<double> jdist;
};

class MdpModel {
 public:
  static StatusOr<MdpModel> Build(const ProfileSuite& suite, const MdpOptions& options);

  const MdpOptions& options() const { return options_; }  // task/hardware resolved
  const std::vector<ModelVariant>& variants() const { return variants_; }
  std::vector<std::string> VariantNames() const;
  const std::vector<int64_t>& levels_us() const { return levels_; }
  int num_levels() const { return static_cast<int>(levels_.size()); }
  int max_queue() const { return n_; }
  int workers() const { return k_; }
  int fastest() const { return 0; }  // variants are sorted by batch-1 latency
  // "Late rather than never" for n queued: the variant with the lowest latency at batch n
  // (whole queue); if no variant takes n, the largest batch any takes (queries stay).
  ModelAction LateAction(int n) const;

  int num_states() const { return n_ * num_levels() + 2; }
  int StateIndex(int n, int j) const { return 1 + (n - 1) * num_levels() + j; }
  int full_state() const { return num_states() - 1; }
  int QueueOf(int s) const;       // 0 for empty, N for full
  int LevelOfState(int s) const;  // 0 for empty and full
  // The slack level of a continuous slack: the largest j with levels[j] <= slack (0 if none).
  int LevelOf(Duration slack) const;

  // Valid pairs of a state (empty: none; its action is the arrival action).
  const Pair* PairsBegin(int s) const { return pairs_.data() + pair_offset_[s]; }
  const Pair* PairsEnd(int s) const { return pairs_.data() + pair_offset_[s + 1]; }
  int NumPairs(int s) const { return pair_offset_[s + 1] - pair_offset_[s]; }
  const std::vector<Pair>& pairs() const { return pairs_; }
  const std::vector<Kernel>& kernels() const { return kernels_; }
  const std::vector<Leftover>& leftovers() const { return leftovers_; }
  // Phase weights of a state: w[x], x = 0..K-1 (sums to 1).
  const double* Phase(int s) const { return phase_.data() + static_cast<size_t>(s) * k_; }
  // [begin, end) of the phases x with weight >= 1e-30, aligned as Kernel::band.
  int PhaseBegin(int s) const { return phase_band_[2 * s]; }
  int PhaseEnd(int s) const { return phase_band_[2 * s + 1]; }

  // The dense next-state distribution of a pair (for tests and tools; O(states)). Kernel
  // tails outside the bands (< 1e-30 per entry) are not stored and read as 0.
  std::vector<double> TransitionRow(int s, const Pair& p) const;
  // Peak throughput of one worker (queries/s) over every variant and batch size.
  double PeakWorkerQps() const;
  // Peak throughput over the (variant, batch) pairs whose latency is within the SLO: above
  // it no sequence of actions can keep serving within the SLO.
  double SloCapacityQps() const;
  // Notes made while building (pruned variants, capped batches), one per line.
  const std::string& notes() const { return notes_; }

 private:
  MdpOptions options_;
  std::vector<ModelVariant> variants_;
  std::vector<int64_t> levels_;
  int n_ = 0, k_ = 1;
  std::vector<int> pair_offset_;
  std::vector<Pair> pairs_;
  std::vector<Kernel> kernels_;
  std::vector<Leftover> leftovers_;
  std::vector<double> phase_;
  std::vector<int> phase_band_;
  std::string notes_;
};

// Resolves the task, hardware and variants of `o` against `suite` and returns the variants
// the MDP uses (profiled on the hardware, latency <= SLO at some batch size, Pareto-pruned
// if asked: dropped when another variant is at least as accurate and at least as fast at
// every batch size), sorted by batch-1 latency. Errors: unknown names, no profile,
// impossible SLO (no variant meets it at batch 1).
StatusOr<std::vector<ModelVariant>> ResolveVariants(const ProfileSuite& suite, MdpOptions* o,
                                                    std::string* notes);

}  // namespace sloserve::mdp
