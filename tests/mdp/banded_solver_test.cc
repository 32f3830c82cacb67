// The fast generator (shared count CDFs, banded kernel rows, issue 15) against a reference
// path: relative value iteration and power iteration over the dense rows of
// MdpModel::TransitionRow (sums in plain order). Decisions must be the same, or differ
// only between actions whose reference values tie within 1e-9; the expectations of the
// chosen policy must agree within 1e-9. Kernels store only their bands, so every row
// must still sum to 1 within 1e-12: the tails left out are negligible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mdp/mdp_test_util.h"
#include "sloserve/mdp/model.h"
#include "sloserve/mdp/policy.h"
#include "sloserve/mdp/solver.h"
#include "sloserve/mdp/synthetic.h"

namespace sloserve::mdp {
namespace {

struct SparseRow {
  std::vector<int> to;
  std::vector<double> p;
};

struct Reference {
  std::vector<int> choice;
  std::vector<std::vector<double>> q;  // per state, per own pair (last sweep)
  int sweeps = 0;
  double gain_lo = 0, gain_hi = 0;
};

std::vector<std::vector<SparseRow>> Rows(const MdpModel& m) {
  std::vector<std::vector<SparseRow>> rows(m.num_states());
  for (int s = 1; s < m.num_states(); ++s) {
    for (const Pair* p = m.PairsBegin(s); p != m.PairsEnd(s); ++p) {
      SparseRow r;
      const std::vector<double> dense = m.TransitionRow(s, *p);
      double sum = 0;
      for (double v : dense) sum += v;
      EXPECT_NEAR(sum, 1.0, 1e-12) << "state " << s << " pair " << (p - m.PairsBegin(s));
      for (int t = 0; t < m.num_states(); ++t) {
        if (dense[t] != 0) {
          r.to.push_back(t);
          r.p.push_back(dense[t]);
        }
      }
      rows[s].push_back(std::move(r));
    }
  }
  return rows;
}

// The solver's criterion (accuracy per query, data transformation eta = 0.95, values
// relative to (1, SLO), stop when the span bound is under tolerance), done densely.
Reference ReferenceSolve(const MdpModel& m, const std::vector<std::vector<SparseRow>>& rows,
                         const SolverOptions& so) {
  const int ns = m.num_states();
  const int top = m.StateIndex(1, m.num_levels() - 1);
  const double eta = 0.95;
  Reference out;
  out.choice.assign(ns, -1);
  out.q.assign(ns, {});
  std::vector<double> v(ns, 0.0), tv(ns, 0.0);
  for (int sweep = 1; sweep <= so.max_sweeps; ++sweep) {
    double lo = 1e300, hi = -1e300;
    for (int s = 1; s < ns; ++s) {
      out.q[s].clear();
      double best = -1e300;
      for (int i = 0; i < m.NumPairs(s); ++i) {
        const Pair& p = m.PairsBegin(s)[i];
        double e = 0;
        for (size_t k = 0; k < rows[s][i].to.size(); ++k)
          e += rows[s][i].p[k] * v[rows[s][i].to[k]];
        const double d = p.action.batch;
        const double val = p.reward / d + (eta / d) * (e - v[s]) + v[s];
        out.q[s].push_back(val);
        if (val > best) {
          best = val;
          out.choice[s] = static_cast<int>(m.PairsBegin(s) - m.pairs().data()) + i;
        }
      }
      tv[s] = best;
      lo = std::min(lo, tv[s] - v[s]);
      hi = std::max(hi, tv[s] - v[s]);
    }
    tv[0] = tv[top];
    out.sweeps = sweep;
    out.gain_lo = lo;
    out.gain_hi = hi;
    const double ref = tv[top];
    for (int s = 0; s < ns; ++s) v[s] = tv[s] - ref;
    if (hi - lo < so.tolerance) break;
  }
  return out;
}

// Accuracy per served query of a choice by lazy power iteration on the dense rows.
double ReferenceAccuracyPerQuery(const MdpModel& m, const std::vector<std::vector<SparseRow>>& rows,
                                 const std::vector<int>& choice, const SolverOptions& so) {
  const int ns = m.num_states();
  std::vector<double> pi(ns, 0.0), next(ns);
  pi[m.StateIndex(1, m.num_levels() - 1)] = 1;
  for (int it = 0; it < so.eval_max_iterations; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    for (int s = 1; s < ns; ++s) {
      const SparseRow& r = rows[s][choice[s] - (m.PairsBegin(s) - m.pairs().data())];
      for (size_t k = 0; k < r.to.size(); ++k) next[r.to[k]] += pi[s] * r.p[k];
    }
    double total = 0, diff = 0;
    for (int s = 0; s < ns; ++s) total += next[s] = 0.5 * (pi[s] + next[s]);
    for (int s = 0; s < ns; ++s) {
      next[s] /= total;
      diff += std::fabs(next[s] - pi[s]);
    }
    std::swap(pi, next);
    if (diff < so.eval_tolerance) break;
  }
  double served = 0, acc = 0;
  for (int s = 1; s < ns; ++s) {
    const Pair& p = m.pairs()[choice[s]];
    served += pi[s] * p.action.batch;
    if (p.met) acc += pi[s] * p.action.batch * m.variants()[p.action.variant].accuracy;
  }
  return acc / served;
}

void ExpectSameAsReference(const ProfileSuite& suite, const MdpOptions& o,
                           const std::string& what) {
  SCOPED_TRACE(what);
  auto m = MdpModel::Build(suite, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto rows = Rows(*m);
  const Reference ref = ReferenceSolve(*m, rows, o.solver);
  const SolveResult sol = Solve(*m, o.solver);
  EXPECT_EQ(sol.sweeps, ref.sweeps);
  EXPECT_NEAR(sol.gain_lo, ref.gain_lo, 1e-9);
  EXPECT_NEAR(sol.gain_hi, ref.gain_hi, 1e-9);
  int differing = 0;
  for (int s = 1; s < m->num_states(); ++s) {
    if (sol.choice[s] == ref.choice[s]) continue;
    ++differing;
    const int first = static_cast<int>(m->PairsBegin(s) - m->pairs().data());
    ASSERT_GE(sol.choice[s], first);
    ASSERT_LT(sol.choice[s], first + m->NumPairs(s));
    EXPECT_NEAR(ref.q[s][sol.choice[s] - first], ref.q[s][ref.choice[s] - first], 1e-9)
        << "state " << s << ": the fast solver's action is not a tie of the reference's";
  }
  EXPECT_LE(differing, m->num_states() / 100) << "more than ties";
  const Evaluation ev = EvaluateChoice(*m, sol.choice, o.solver);
  EXPECT_NEAR(ev.accuracy_per_query, ReferenceAccuracyPerQuery(*m, rows, sol.choice, o.solver),
              1e-9);
}

TEST(BandedSolver, SmallInstancesMatchTheDenseReference) {
  const ProfileSuite suite = sloserve::testing::SmallSuite();
  for (int workers : {1, 3}) {
    for (BatchingKind b : {BatchingKind::kMaximal, BatchingKind::kVariable}) {
      for (double load : {60.0, 250.0, 600.0}) {
        MdpOptions o = testing::SmallOptions(load, workers);
        o.batching = b;
        ExpectSameAsReference(suite, o,
                              "workers " + std::to_string(workers) + " " + BatchingName(b) +
                                  " load " + std::to_string(load));
      }
    }
  }
  MdpOptions gamma = testing::SmallOptions(250, 2);
  gamma.arrival = {ArrivalKind::kGamma, 2.0};
  ExpectSameAsReference(suite, gamma, "gamma cv 2");
}

// The paper's image setting (9 models, 60 workers, 2,000 qps, SLO 150 ms), with fewer
// slack levels and a shorter queue than the paper's D = 100, N = 32 so that the dense
// reference stays fast: the kernels are as wide (60 phases) and as sparse.
TEST(BandedSolver, ImageSuiteMatchesTheDenseReference) {
  const ProfileSuite& suite = sloserve::testing::EmbeddedSuite("ramsis-image");
  for (double load : {800.0, 2000.0, 3600.0}) {
    ExpectSameAsReference(suite, testing::SmallImageOptions(load),
                          "image load " + std::to_string(load));
  }
}

}  // namespace
}  // namespace sloserve::mdp
