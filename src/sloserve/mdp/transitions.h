#pragma once
// Transition probabilities of the per-worker MDP (RAMSIS section 4.4), for a worker that
// gets every K-th arrival of the central queue (round robin). docs/ramsis-mdp.md derives
// them; the functions here fill the factored tables MdpModel stores.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sloserve/mdp/arrival_counts.h"
#include "sloserve/mdp/model.h"

namespace sloserve::mdp {

// Count CDFs over intervals of the central queue, computed once per interval length and
// shared by every kernel of a model: the slack kernels of all latencies need the CDF over
// SLO - T_j for the same levels j, and the count kernels the CDF over each latency.
class CountCdfCache {
 public:
  // cdf[i] = P(N(t) <= i), i = 0..kmax (ArrivalCounts::Cdf), computed on first use.
  const std::vector<double>& Cdf(const ArrivalCounts& counts, double t_us, int kmax);

 private:
  std::map<std::pair<double, int>, std::vector<double>> cdfs_;
};

// [begin, end) of the entries >= 1e-30 of row[0..n): begin a multiple of 4, end a
// multiple of 4 or n, so a 4-way dot product over it adds the same products in the same
// order as over the whole row, less tails below 1e-30 (empty: begin == end).
std::pair<int, int> AlignedBand(const double* row, int n);

struct TransitionContext {
  int n = 32;  // max queue N
  int k = 1;   // workers K
  int64_t slo_us = 0;
  const std::vector<int64_t>* levels = nullptr;  // slack levels T_j, ascending, T_0 = 0
  const ArrivalCounts* counts = nullptr;         // central-queue arrival counts
  CountCdfCache* cache = nullptr;                // CDFs of counts (same rate as counts)
  std::vector<double>* scratch = nullptr;        // BuildSlackKernel's table, reused
};

// Interval A: phase weights w[x] of a state with n queued whose head arrived head_age_us
// ago: P(x | n - 1 worker arrivals after the head), from the count of central arrivals
// k_A = (n - 1) K + x in the head's age (the paper's init distribution).
void PhaseWeights(const TransitionContext& c, int n, int64_t head_age_us, double* w);

// Count part of a kernel: P(m worker arrivals during tau | x) = P(N(tau) in
// [m K - x, m K - x + K - 1]).
void BuildCountKernel(const TransitionContext& c, Kernel* kernel);

// Whole-queue part (intervals B, C, D): P(n' arrivals, first one's slack in level j' | x).
void BuildSlackKernel(const TransitionContext& c, Kernel* kernel);

// Next state of an action serving b of n queued queries (state's level j), latency of the
// kernel: the remaining n - b queries stay, the new head is the worker's b-th query after
// the old head (its arrival time: central arrival b K of k_A uniform order statistics over
// the head's age, k_A at its mean), plus the arrivals during tau (independent of it).
Leftover BuildLeftover(const TransitionContext& c, const Kernel& kernel, const double* phase, int n,
                       int j, int b);

}  // namespace sloserve::mdp
