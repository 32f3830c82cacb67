#include "sloserve/policy/planning/infadapter_milp.h"

#include <glpk.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

namespace sloserve {
namespace {

struct ProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};
using Prob = std::unique_ptr<glp_prob, ProbDeleter>;

// The assignment columns of one variant: used = 1 iff it runs, y[i] = 1 iff it runs with
// exactly cores[i] cores (sum_i y[i] = used). The "variant used" binaries come first in
// the column order and are what most-fractional branching usually settles first: a
// balanced split (variant in or out) where a branch on one y[i] = 0 barely moves the
// bound. (An incremental form, x[i] = "at least cores[i] cores" with x[i] <= x[i-1], has
// the same LP bound but branched 2-10x slower in GLPK here.)
struct VariantColumns {
  std::vector<int> option;        // option[i] = index into variants[m].options
  std::vector<double> cores, th;  // of option[i]; th capped
  std::vector<bool> needs_load;   // option[i] costs the variant's load time
  int used = 0;                   // GLPK column (1-based); 0 when the variant has no option
  std::vector<int> y;             // GLPK columns (1-based)
};

struct Layout {
  std::vector<VariantColumns> v;
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

// Adds the assignment columns, their one-count rows and the budget row. Throughputs are
// capped at `cap` (no variant can take more than lambda: a tighter LP relaxation), and
// an option that must be loaded is left out when one with fewer cores has at least its
// capped throughput (it can never be better: the same quotas fit, with fewer cores and
// no more loading cost), which also drops every core count above the first whose
// throughput covers lambda. Both are exact. Options deployed now are always kept.
Layout AddAssignment(glp_prob* lp, const InfAdapterProblem& p, double cap, Triplets& t) {
  Layout l;
  l.v.resize(p.variants.size());
  for (size_t m = 0; m < p.variants.size(); ++m) {
    VariantColumns& vc = l.v[m];
    double best = 0;  // highest capped throughput kept so far (options ascend in cores)
    const InfAdapterCandidate& c = p.variants[m];
    for (size_t j = 0; j < c.options.size(); ++j) {
      const double th = std::min(c.options[j].throughput_rps, cap);
      const bool needs_load = InfAdapterNeedsLoad(c, c.options[j].cores);
      if (th <= best && (needs_load || th <= 0)) continue;
      best = std::max(best, th);
      vc.option.push_back(static_cast<int>(j));
      vc.cores.push_back(c.options[j].cores);
      vc.th.push_back(th);
      vc.needs_load.push_back(needs_load);
    }
    if (vc.option.empty()) continue;
    vc.used = glp_add_cols(lp, 1);
    glp_set_col_kind(lp, vc.used, GLP_BV);
  }
  for (VariantColumns& vc : l.v) {
    if (vc.option.empty()) continue;
    const int row = glp_add_rows(lp, 1);  // sum_i y[i] - used = 0
    glp_set_row_bnds(lp, row, GLP_FX, 0, 0);
    t.Add(row, vc.used, -1);
    for (size_t i = 0; i < vc.option.size(); ++i) {
      const int col = glp_add_cols(lp, 1);
      glp_set_col_kind(lp, col, GLP_BV);
      vc.y.push_back(col);
      t.Add(row, col, 1);
    }
  }
  const int budget = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, budget, GLP_UP, 0, p.budget_cores);
  for (const VariantColumns& vc : l.v) {
    for (size_t i = 0; i < vc.y.size(); ++i) t.Add(budget, vc.y[i], vc.cores[i]);
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
  // Branch on the most fractional column (in practice a "variant used" one first, see
  // VariantColumns), best local bound backtracking, no cuts: on the 20 variants x 64
  // cores benchmark this halves the slowest seeds against first-fractional branching on
  // the y's alone (docs/infadapter.md#performance); Driebeck-Tomlin and pseudo-cost
  // branching are 2-10x slower, and MIR / Gomory / cover / clique cuts, the feasibility
  // pump and proximity search did not help.
  parm.br_tech = GLP_BR_MFV;
  parm.bt_tech = GLP_BT_BLB;
  parm.tm_lim = o.time_limit_ms;
  const int rc = glp_intopt(lp, &parm);
  SolveResult r;
  if (rc == GLP_ENOPFS) return r;  // the LP relaxation is infeasible (presolver)
  if (rc != 0 && rc != GLP_ETMLIM && rc != GLP_EMIPGAP) {
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
  r.pick.assign(l.v.size(), -1);
  for (size_t m = 0; m < l.v.size(); ++m) {
    const VariantColumns& vc = l.v[m];
    for (size_t i = 0; i < vc.y.size(); ++i) {
      if (glp_mip_col_val(lp, vc.y[i]) > 0.5) r.pick[m] = vc.option[i];
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
  const Layout l = AddAssignment(lp.get(), p, target, t);
  const double core_coef = p.weights.beta / InfAdapterCoreScale(p);
  const double load_coef = p.weights.gamma / InfAdapterLoadScale(p);
  std::vector<int> lambda;  // the lambda_m columns
  std::vector<size_t> unloaded;
  for (size_t m = 0; m < p.variants.size(); ++m) {
    const InfAdapterCandidate& c = p.variants[m];
    const VariantColumns& vc = l.v[m];
    if (vc.y.empty()) continue;
    for (size_t i = 0; i < vc.y.size(); ++i) {
      glp_set_obj_coef(lp.get(), vc.y[i], -core_coef * vc.cores[i]);
    }
    const int col = glp_add_cols(lp.get(), 1);
    glp_set_col_bnds(lp.get(), col, GLP_DB, 0, *std::max_element(vc.th.begin(), vc.th.end()));
    glp_set_obj_coef(lp.get(), col, p.weights.alpha * c.accuracy / target);
    lambda.push_back(col);
    // lambda_m - sum_i th[i] y[i] <= 0
    const int cap = glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), cap, GLP_UP, 0, 0);
    t.Add(cap, col, 1);
    for (size_t i = 0; i < vc.y.size(); ++i) t.Add(cap, vc.y[i], -vc.th[i]);
    if (std::find(vc.needs_load.begin(), vc.needs_load.end(), true) != vc.needs_load.end()) {
      unloaded.push_back(m);
    }
  }
  const int sum = glp_add_rows(lp.get(), 1);  // sum_m lambda_m = lambda
  glp_set_row_bnds(lp.get(), sum, GLP_FX, target, target);
  for (int col : lambda) t.Add(sum, col, 1);
  if (!unloaded.empty()) {
    const int load = glp_add_cols(lp.get(), 1);  // L
    glp_set_col_bnds(lp.get(), load, GLP_LO, 0, 0);
    glp_set_obj_coef(lp.get(), load, -load_coef);
    for (size_t m : unloaded) {
      // L - load_m * sum_{i must load} y[i] >= 0
      const int row = glp_add_rows(lp.get(), 1);
      glp_set_row_bnds(lp.get(), row, GLP_LO, 0, 0);
      t.Add(row, load, 1);
      const VariantColumns& vc = l.v[m];
      for (size_t i = 0; i < vc.y.size(); ++i) {
        if (vc.needs_load[i]) t.Add(row, vc.y[i], -p.variants[m].load_time_s);
      }
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
  const Layout l = AddAssignment(lp.get(), p, std::numeric_limits<double>::infinity(), t);
  bool any = false;
  for (const VariantColumns& vc : l.v) {
    for (size_t i = 0; i < vc.y.size(); ++i) {
      glp_set_obj_coef(lp.get(), vc.y[i], vc.th[i]);
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
