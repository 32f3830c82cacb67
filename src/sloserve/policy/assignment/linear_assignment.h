#pragma once
// Rectangular linear-sum (min-cost bipartite) assignment, used by Kairos query
// distribution (Kairos, HPDC'23, section 5.1, Eqs. 4-8: "Kairos solves this problem
// using the Jonker-Volgenant algorithm").
//
// Algorithm: the shortest-augmenting-path form of Jonker & Volgenant (1987) for
// rectangular matrices as described by Crouse ("On implementing 2D rectangular
// assignment algorithms", IEEE TAES 2016) -- the algorithm behind
// scipy.optimize.linear_sum_assignment, which the Kairos artifact calls. One row is
// added at a time; a Dijkstra-like search over reduced costs (dual potentials u, v)
// finds the cheapest augmenting path, preferring a free column on ties so the search
// stops early. O(r^2 c) for r <= c (the matrix is handled transposed when r > c).
//
// Semantics: with r rows and c columns, min(r, c) pairs are formed, every row matched
// when r <= c and every column matched when r > c, minimising the sum of their costs.
// Costs must be finite (Kairos folds its QoS constraint into a finite penalty, Eq. 8).
//
// Solve() reuses member scratch buffers: after the first call of a given size it does
// not allocate. Not thread-safe (one solver per policy).
#include <cstdint>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

class LinearAssignment {
 public:
  // `cost` is row-major, rows x cols. On success `row_to_col` has `rows` entries: the
  // column matched to each row, or -1 for rows left unmatched (only when rows > cols).
  // Returns the total cost of the matching. Errors: negative dimensions, a cost vector
  // of the wrong size, non-finite costs.
  StatusOr<double> Solve(int rows, int cols, const std::vector<double>& cost,
                         std::vector<int>* row_to_col);

 private:
  // Core solver for n <= m on an accessor that yields cost(i, j).
  template <typename CostFn>
  void SolveWide(int n, int m, const CostFn& cost);

  std::vector<double> u_, v_, shortest_, transposed_;
  std::vector<int> path_, col4row_, row4col_, remaining_;
  std::vector<uint8_t> sr_, sc_;
};

}  // namespace sloserve
