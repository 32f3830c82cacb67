// Linear assignment (Jonker-Volgenant shortest augmenting path) against brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "sloserve/core/rng.h"
#include "sloserve/policy/assignment/linear_assignment.h"

namespace sloserve {
namespace {

// Exhaustive minimum over all matchings of min(r, c) pairs covering the smaller side.
double BruteForce(int rows, int cols, const std::vector<double>& cost) {
  const bool wide = rows <= cols;
  const int small = wide ? rows : cols, large = wide ? cols : rows;
  std::vector<int> perm(static_cast<size_t>(large));
  std::iota(perm.begin(), perm.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  // Every permutation of the large side; its first `small` entries are the partners.
  do {
    double s = 0;
    for (int k = 0; k < small; ++k) {
      const int i = wide ? k : perm[static_cast<size_t>(k)];
      const int j = wide ? perm[static_cast<size_t>(k)] : k;
      s += cost[static_cast<size_t>(i * cols + j)];
    }
    best = std::min(best, s);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

void CheckMatching(int rows, int cols, const std::vector<int>& row_to_col) {
  ASSERT_EQ(row_to_col.size(), static_cast<size_t>(rows));
  std::vector<int> used(static_cast<size_t>(cols), 0);
  int matched = 0;
  for (int j : row_to_col) {
    if (j < 0) continue;
    ASSERT_LT(j, cols);
    EXPECT_EQ(used[static_cast<size_t>(j)]++, 0) << "column used twice";
    ++matched;
  }
  EXPECT_EQ(matched, std::min(rows, cols));
}

TEST(LinearAssignmentTest, MatchesBruteForceOnRandomMatrices) {
  LinearAssignment solver;
  Rng rng = MakeRng(7, "assignment-test");
  std::vector<int> got;
  int cases = 0;
  for (int rows = 1; rows <= 7; ++rows) {
    for (int cols = 1; cols <= 7; ++cols) {
      for (int rep = 0; rep < 12; ++rep) {
        std::vector<double> cost(static_cast<size_t>(rows * cols));
        const int mode = rep % 3;  // continuous, small integers (ties), penalties
        for (double& c : cost) {
          const double u = Uniform01(rng);
          c = mode == 0   ? u * 100
              : mode == 1 ? static_cast<double>(static_cast<int>(u * 4))
                          : (u < 0.4 ? 3500.0 : u * 300);
        }
        auto total = solver.Solve(rows, cols, cost, &got);
        ASSERT_TRUE(total.ok()) << total.status().message();
        CheckMatching(rows, cols, got);
        double sum = 0;
        for (int i = 0; i < rows; ++i) {
          if (got[static_cast<size_t>(i)] >= 0) {
            sum += cost[static_cast<size_t>(i * cols + got[static_cast<size_t>(i)])];
          }
        }
        EXPECT_NEAR(*total, sum, 1e-9);
        EXPECT_NEAR(*total, BruteForce(rows, cols, cost), 1e-7)
            << rows << "x" << cols << " mode " << mode;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 7 * 7 * 12);
}

TEST(LinearAssignmentTest, KnownSquareAndRectangular) {
  LinearAssignment solver;
  std::vector<int> got;
  // Classic 3x3: optimum 5 = 1 (0,1) + 2 (1,0) + 2 (2,2).
  std::vector<double> c = {4, 1, 3, 2, 0, 5, 3, 2, 2};
  EXPECT_DOUBLE_EQ(solver.Solve(3, 3, c, &got).value(), 5.0);
  EXPECT_EQ(got, (std::vector<int>{1, 0, 2}));
  // 3 rows, 2 columns: the dearest row stays unmatched.
  std::vector<double> tall = {1, 2, 9, 9, 2, 1};
  EXPECT_DOUBLE_EQ(solver.Solve(3, 2, tall, &got).value(), 2.0);
  EXPECT_EQ(got, (std::vector<int>{0, -1, 1}));
  // 1 row, 4 columns: the cheapest column.
  std::vector<double> wide = {5, 3, 4, 8};
  EXPECT_DOUBLE_EQ(solver.Solve(1, 4, wide, &got).value(), 3.0);
  EXPECT_EQ(got, (std::vector<int>{1}));
}

TEST(LinearAssignmentTest, EmptyAndBadInput) {
  LinearAssignment solver;
  std::vector<int> got = {7};
  EXPECT_DOUBLE_EQ(solver.Solve(0, 5, {}, &got).value(), 0.0);
  EXPECT_TRUE(got.empty());
  EXPECT_DOUBLE_EQ(solver.Solve(2, 0, {}, &got).value(), 0.0);
  EXPECT_EQ(got, (std::vector<int>{-1, -1}));
  EXPECT_FALSE(solver.Solve(2, 2, {1, 2, 3}, &got).ok());
  EXPECT_FALSE(solver.Solve(-1, 2, {}, &got).ok());
  auto inf = solver.Solve(1, 2, {1, std::numeric_limits<double>::infinity()}, &got);
  ASSERT_FALSE(inf.ok());
  EXPECT_NE(inf.status().message().find("non-finite"), std::string::npos);
}

TEST(LinearAssignmentTest, LargerRandomMatchesTransposeAndIsStableAcrossReuse) {
  LinearAssignment solver;
  Rng rng = MakeRng(3, "assignment-large");
  std::vector<int> got, got_t;
  for (auto [r, c] : {std::pair{40, 40}, std::pair{60, 15}, std::pair{15, 60}}) {
    std::vector<double> cost(static_cast<size_t>(r * c)), t(cost.size());
    for (double& x : cost) x = Uniform01(rng) * 1000;
    for (int i = 0; i < r; ++i) {
      for (int j = 0; j < c; ++j)
        t[static_cast<size_t>(j * r + i)] = cost[static_cast<size_t>(i * c + j)];
    }
    const double a = solver.Solve(r, c, cost, &got).value();
    const double b = solver.Solve(c, r, t, &got_t).value();
    EXPECT_NEAR(a, b, 1e-6);
    CheckMatching(r, c, got);
    EXPECT_NEAR(solver.Solve(r, c, cost, &got).value(), a, 1e-9);  // reuse of scratch
  }
}

}  // namespace
}  // namespace sloserve
