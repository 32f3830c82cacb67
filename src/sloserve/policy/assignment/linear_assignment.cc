#include "sloserve/policy/assignment/linear_assignment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace sloserve {

template <typename CostFn>
void LinearAssignment::SolveWide(int n, int m, const CostFn& cost) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const size_t nn = static_cast<size_t>(n), mm = static_cast<size_t>(m);
  u_.assign(nn, 0.0);
  v_.assign(mm, 0.0);
  shortest_.resize(mm);
  path_.assign(mm, -1);
  col4row_.assign(nn, -1);
  row4col_.assign(mm, -1);
  remaining_.resize(mm);
  sr_.resize(nn);
  sc_.resize(mm);

  for (int cur_row = 0; cur_row < n; ++cur_row) {
    // Dijkstra over columns from cur_row on reduced costs c(i,j) - u_i - v_j.
    double min_val = 0;
    int i = cur_row;
    int num_remaining = m;
    for (int it = 0; it < m; ++it) remaining_[static_cast<size_t>(it)] = m - it - 1;
    std::fill(sr_.begin(), sr_.end(), uint8_t{0});
    std::fill(sc_.begin(), sc_.end(), uint8_t{0});
    std::fill(shortest_.begin(), shortest_.end(), kInf);
    int sink = -1;
    while (sink == -1) {
      sr_[static_cast<size_t>(i)] = 1;
      int index = -1;
      double lowest = kInf;
      const double ui = u_[static_cast<size_t>(i)];
      for (int it = 0; it < num_remaining; ++it) {
        const size_t j = static_cast<size_t>(remaining_[static_cast<size_t>(it)]);
        const double r = min_val + cost(i, static_cast<int>(j)) - ui - v_[j];
        if (r < shortest_[j]) {
          path_[j] = i;
          shortest_[j] = r;
        }
        // Prefer a free column on ties: the path ends there.
        if (shortest_[j] < lowest || (shortest_[j] == lowest && row4col_[j] == -1)) {
          lowest = shortest_[j];
          index = it;
        }
      }
      min_val = lowest;
      const size_t j = static_cast<size_t>(remaining_[static_cast<size_t>(index)]);
      if (row4col_[j] == -1) {
        sink = static_cast<int>(j);
      } else {
        i = row4col_[j];
      }
      sc_[j] = 1;
      remaining_[static_cast<size_t>(index)] = remaining_[static_cast<size_t>(--num_remaining)];
    }
    // Dual update keeps reduced costs non-negative and matched edges tight.
    u_[static_cast<size_t>(cur_row)] += min_val;
    for (size_t r = 0; r < nn; ++r) {
      if (sr_[r] && static_cast<int>(r) != cur_row) {
        u_[r] += min_val - shortest_[static_cast<size_t>(col4row_[r])];
      }
    }
    for (size_t c = 0; c < mm; ++c) {
      if (sc_[c]) v_[c] -= min_val - shortest_[c];
    }
    // Augment along the path back to cur_row.
    int j = sink;
    while (true) {
      const int r = path_[static_cast<size_t>(j)];
      row4col_[static_cast<size_t>(j)] = r;
      std::swap(col4row_[static_cast<size_t>(r)], j);
      if (r == cur_row) break;
    }
  }
}

StatusOr<double> LinearAssignment::Solve(int rows, int cols, const std::vector<double>& cost,
                                         std::vector<int>* row_to_col) {
  if (rows < 0 || cols < 0) return InvalidArgumentError("assignment: negative dimensions");
  if (cost.size() != static_cast<size_t>(rows) * static_cast<size_t>(cols)) {
    return InvalidArgumentError("assignment: cost matrix has " + std::to_string(cost.size()) +
                                " entries, expected " + std::to_string(rows) + "x" +
                                std::to_string(cols));
  }
  for (double c : cost) {
    if (!std::isfinite(c)) return InvalidArgumentError("assignment: non-finite cost");
  }
  row_to_col->assign(static_cast<size_t>(rows), -1);
  if (rows == 0 || cols == 0) return 0.0;
  const double* c = cost.data();
  double total = 0;
  if (rows <= cols) {
    SolveWide(rows, cols, [c, cols](int i, int j) {
      return c[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)];
    });
    for (int i = 0; i < rows; ++i) {
      const int j = col4row_[static_cast<size_t>(i)];
      (*row_to_col)[static_cast<size_t>(i)] = j;
      total += c[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)];
    }
  } else {  // transpose (into scratch, for locality): columns become the rows to match
    transposed_.resize(cost.size());
    for (size_t i = 0; i < static_cast<size_t>(rows); ++i) {
      for (size_t j = 0; j < static_cast<size_t>(cols); ++j) {
        transposed_[j * static_cast<size_t>(rows) + i] = c[i * static_cast<size_t>(cols) + j];
      }
    }
    const double* t = transposed_.data();
    SolveWide(cols, rows, [t, rows](int i, int j) {
      return t[static_cast<size_t>(i) * static_cast<size_t>(rows) + static_cast<size_t>(j)];
    });
    for (int j = 0; j < cols; ++j) {
      const int i = col4row_[static_cast<size_t>(j)];
      (*row_to_col)[static_cast<size_t>(i)] = j;
      total += c[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)];
    }
  }
  return total;
}

}  // namespace sloserve
