#include "sloserve/policy/planning/infadapter_milp.h"

#include <glpk.h>

#include <memory>
#include <vector>

namespace sloserve {
namespace {

struct ProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};
using Prob = std::unique_ptr<glp_prob, ProbDeleter>;

// Column numbers of the y_{m,k} binaries, in the same layout for both models.
struct Layout {
  std::vector<std::vector<int>> y;  // y[m][j] = GLPK column (1-based)
  std::vector<int> lambda;          // lambda[m] = column, 0 = none (no options)
  int load = 0;                     // L, 0 = none
};

// Sparse matrix in GLPK's 1-based triplet form.
struct Triplets {
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  void Add(int row, int col, double v) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(v);
  }
};

// Adds y columns, the one-count-per-variant rows and the budget row.
Layout AddAssignment(glp_prob* lp, const InfAdapterProblem& p, Triplets& t) {
  Layout l;
  l.y.resize(p.variants.size());
  for (size_t m = 0; m < p.variants.size(); ++m) {
    for (size_t j = 0; j < p.variants[m].options.size(); ++j) {
      const int col = glp_add_cols(lp, 1);
      glp_set_col_kind(lp, col, GLP_BV);
      l.y[m].push_back(col);
    }
  }
  for (size_t m = 0; m < p.variants.size(); ++m) {
    if (l.y[m].empty()) continue;
    const int row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, GLP_UP, 0, 1);
    for (int col : l.y[m]) t.Add(row, col, 1);
  }
  const int budget = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, budget, GLP_UP, 0, p.budget_cores);
  for (size_t m = 0; m < p.variants.size(); ++m) {
    for (size_t j = 0; j < l.y[m].size(); ++j) {
      t.Add(budget, l.y[m][j], p.variants[m].options[j].cores);
    }
  }
  return l;
}

struct SolveResult {
  bool feasible = false;
  bool optimal = false;
  std::vector<int> pick;  // option index per variant, -1 unused
  double objective = 0;
};

StatusOr<SolveResult> Solve(glp_prob* lp, const Layout& l, const InfAdapterMilpOptions& o) {
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;  // also reports an infeasible LP relaxation as GLP_ENOPFS
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = o.time_limit_ms;
  const int rc = glp_intopt(lp, &parm);
  SolveResult r;
  if (rc == GLP_ENOPFS) return r;  // the LP relaxation is infeasible (presolver)
  if (rc != 0 && rc != GLP_ETMLIM) {
    return InternalError("GLPK glp_intopt failed with code " + std::to_string(rc));
  }
  const int status = glp_mip_status(lp);
  if (status == GLP_NOFEAS) return r;
  if (status != GLP_OPT && status != GLP_FEAS) {
    if (rc == GLP_ETMLIM) {
      return UnavailableError("GLPK found no feasible plan within " +
                              std::to_string(o.time_limit_ms) + " ms");
    }
    return InternalError("GLPK ended with MIP status " + std::to_string(status));
  }
  r.feasible = true;
  r.optimal = status == GLP_OPT;
  r.objective = glp_mip_obj_val(lp);
  r.pick.assign(l.y.size(), -1);
  for (size_t m = 0; m < l.y.size(); ++m) {
    for (size_t j = 0; j < l.y[m].size(); ++j) {
      if (glp_mip_col_val(lp, l.y[m][j]) > 0.5) r.pick[m] = static_cast<int>(j);
    }
  }
  return r;
}

// Eq. 1 with lambda = target > 0.
StatusOr<SolveResult> SolveEq1(const InfAdapterProblem& p, double target,
                               const InfAdapterMilpOptions& o) {
  Prob lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  Triplets t;
  Layout l = AddAssignment(lp.get(), p, t);
  const double core_coef = p.weights.beta / InfAdapterCoreScale(p);
  const double load_coef = p.weights.gamma / InfAdapterLoadScale(p);
  l.lambda.assign(p.variants.size(), 0);
  bool any_unloaded = false;
  for (size_t m = 0; m < p.variants.size(); ++m) {
    const InfAdapterCandidate& c = p.variants[m];
    if (l.y[m].empty()) continue;
    double max_th = 0;
    for (size_t j = 0; j < c.options.size(); ++j) {
      glp_set_obj_coef(lp.get(), l.y[m][j], -core_coef * c.options[j].cores);
      max_th = std::max(max_th, c.options[j].throughput_rps);
    }
    const int col = glp_add_cols(lp.get(), 1);
    glp_set_col_bnds(lp.get(), col, max_th > 0 ? GLP_DB : GLP_FX, 0, max_th);
    glp_set_obj_coef(lp.get(), col, p.weights.alpha * c.accuracy / target);
    l.lambda[m] = col;
    // lambda_m - sum_k th_m(k) y_{m,k} <= 0
    const int cap = glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), cap, GLP_UP, 0, 0);
    t.Add(cap, col, 1);
    for (size_t j = 0; j < c.options.size(); ++j) {
      t.Add(cap, l.y[m][j], -c.options[j].throughput_rps);
    }
    any_unloaded |= !c.loaded && c.load_time_s > 0;
  }
  const int sum = glp_add_rows(lp.get(), 1);
  glp_set_row_bnds(lp.get(), sum, GLP_FX, target, target);
  for (int col : l.lambda) {
    if (col != 0) t.Add(sum, col, 1);
  }
  if (any_unloaded) {
    l.load = glp_add_cols(lp.get(), 1);
    glp_set_col_bnds(lp.get(), l.load, GLP_LO, 0, 0);
    glp_set_obj_coef(lp.get(), l.load, -load_coef);
    for (size_t m = 0; m < p.variants.size(); ++m) {
      const InfAdapterCandidate& c = p.variants[m];
      if (l.y[m].empty() || c.loaded || c.load_time_s <= 0) continue;
      // L - load_m * sum_k y_{m,k} >= 0
      const int row = glp_add_rows(lp.get(), 1);
      glp_set_row_bnds(lp.get(), row, GLP_LO, 0, 0);
      t.Add(row, l.load, 1);
      for (int y : l.y[m]) t.Add(row, y, -c.load_time_s);
    }
  }
  glp_load_matrix(lp.get(), static_cast<int>(t.ia.size()) - 1, t.ia.data(), t.ja.data(),
                  t.ar.data());
  return Solve(lp.get(), l, o);
}

}  // namespace

StatusOr<double> InfAdapterMaxCapacity(const InfAdapterProblem& p, const InfAdapterMilpOptions& o) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  Prob lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  Triplets t;
  const Layout l = AddAssignment(lp.get(), p, t);
  bool any = false;
  for (size_t m = 0; m < p.variants.size(); ++m) {
    for (size_t j = 0; j < l.y[m].size(); ++j) {
      glp_set_obj_coef(lp.get(), l.y[m][j], p.variants[m].options[j].throughput_rps);
      any = true;
    }
  }
  if (!any) return 0.0;
  glp_load_matrix(lp.get(), static_cast<int>(t.ia.size()) - 1, t.ia.data(), t.ja.data(),
                  t.ar.data());
  ASSIGN_OR_RETURN(SolveResult r, Solve(lp.get(), l, o));
  if (!r.feasible) return InternalError("GLPK: the max-capacity model has no solution");
  // The exact capacity of the chosen assignment.
  double cap = 0;
  for (size_t m = 0; m < r.pick.size(); ++m) {
    if (r.pick[m] >= 0) cap += p.variants[m].options[r.pick[m]].throughput_rps;
  }
  return cap;
}

StatusOr<InfAdapterPlan> SolveInfAdapterMilp(const InfAdapterProblem& p,
                                             const InfAdapterMilpOptions& o) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  const std::vector<int> none(p.variants.size(), -1);
  if (p.lambda_rps <= 0) return EvaluateInfAdapterChoice(p, none, 0);
  double target = p.lambda_rps;
  ASSIGN_OR_RETURN(SolveResult r, SolveEq1(p, target, o));
  if (!r.feasible) {
    ASSIGN_OR_RETURN(const double max_cap, InfAdapterMaxCapacity(p, o));
    target = std::min(p.lambda_rps, max_cap * (1 - 1e-9));
    if (target <= 0) {
      InfAdapterPlan plan = EvaluateInfAdapterChoice(p, none, 0);
      plan.shortfall_rps = p.lambda_rps;
      return plan;
    }
    ASSIGN_OR_RETURN(r, SolveEq1(p, target, o));
    if (!r.feasible) {
      return InternalError("GLPK: no plan reaches the maximum capacity " + std::to_string(max_cap) +
                           " rps");
    }
  }
  InfAdapterPlan plan = EvaluateInfAdapterChoice(p, r.pick, target);
  plan.optimal = r.optimal;
  plan.shortfall_rps = std::max(0.0, p.lambda_rps - plan.served_rps);
  return plan;
}

}  // namespace sloserve
