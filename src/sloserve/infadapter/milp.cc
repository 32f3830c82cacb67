#include "sloserve/infadapter/milp.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sloserve/infadapter/incumbent.h"

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
  std::vector<int> lambda;  // Eq. 1: the lambda_m column per variant (0: none)
  int load = 0;             // Eq. 1: the L column (0: no variant must be loaded)
};

// A plan the MILP starts from (infadapter/incumbent.h), as GLPK column values.
struct Incumbent {
  std::vector<double> x;  // 1-based, every column
  double objective = 0;   // sum_j c_j x_j, as GLPK computes it
  bool given = false;     // handed to GLPK
};

// excluded[m][j]: option j of variant m is left out of the model.
using Excluded = std::vector<std::vector<bool>>;

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
// `excluded` (may be null) leaves out more options: those reduced-cost fixing ruled out.
Layout AddAssignment(glp_prob* lp, const InfAdapterProblem& p, double cap, const Excluded* excluded,
                     Triplets& t) {
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
      if (excluded != nullptr && (*excluded)[m][j]) continue;
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

// GLPK's MIP presolver is off (the incumbent is given in the columns of this problem; the
// presolved one has others), so glp_intopt starts from this LP's optimal basis.
StatusOr<bool> SolveRootLp(glp_prob* lp) {
  glp_smcp sm;
  glp_init_smcp(&sm);
  sm.msg_lev = GLP_MSG_OFF;
  const int rc = glp_simplex(lp, &sm);
  if (rc != 0) return InternalError("GLPK glp_simplex failed with code " + std::to_string(rc));
  if (glp_get_status(lp) == GLP_NOFEAS) return false;
  if (glp_get_status(lp) != GLP_OPT) {
    return InternalError("GLPK: the LP relaxation ended with status " +
                         std::to_string(glp_get_status(lp)));
  }
  return true;
}

// Makes the incumbent GLPK's first integer solution, at the first heuristic call (root).
void GiveIncumbent(glp_tree* tree, void* info) {
  auto* inc = static_cast<Incumbent*>(info);
  if (glp_ios_reason(tree) == GLP_IHEUR && !inc->given) {
    inc->given = true;
    glp_ios_heur_sol(tree, inc->x.data());
  }
}

// Branch and bound from the solved root LP; `incumbent` (may be null) is its first plan.
StatusOr<SolveResult> Solve(glp_prob* lp, const Layout& l, const InfAdapterMilpOptions& o,
                            Incumbent* incumbent) {
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_OFF;
  parm.msg_lev = GLP_MSG_OFF;
  // Branch on the most fractional column (in practice a "variant used" one first, see
  // VariantColumns), best local bound backtracking, no cuts (docs/infadapter.md#model):
  // Driebeck-Tomlin and pseudo-cost branching are 2-10x slower, and MIR / Gomory / cover /
  // clique cuts, the feasibility pump and proximity search did not help.
  parm.br_tech = GLP_BR_MFV;
  parm.bt_tech = GLP_BT_BLB;
  parm.tm_lim = o.time_limit_ms;
  if (incumbent != nullptr) {
    parm.cb_func = GiveIncumbent;
    parm.cb_info = incumbent;
  }
  const int rc = glp_intopt(lp, &parm);
  SolveResult r;
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
  r.pick.assign(l.v.size(), -1);
  for (size_t m = 0; m < l.v.size(); ++m) {
    const VariantColumns& vc = l.v[m];
    for (size_t i = 0; i < vc.y.size(); ++i) {
      if (glp_mip_col_val(lp, vc.y[i]) > 0.5) r.pick[m] = vc.option[i];
    }
  }
  return r;
}

// Eq. 1 with lambda = target > 0 as a GLPK model (see the header): the assignment
// columns, then lambda_m per variant and L.
Layout BuildEq1(glp_prob* lp, const InfAdapterProblem& p, double target, const Excluded* excluded) {
  glp_set_obj_dir(lp, GLP_MAX);
  Triplets t;
  Layout l = AddAssignment(lp, p, target, excluded, t);
  l.lambda.assign(p.variants.size(), 0);
  const double core_coef = p.weights.beta / InfAdapterCoreScale(p);
  const double load_coef = p.weights.gamma / InfAdapterLoadScale(p);
  std::vector<size_t> unloaded;
  for (size_t m = 0; m < p.variants.size(); ++m) {
    const VariantColumns& vc = l.v[m];
    if (vc.y.empty()) continue;
    for (size_t i = 0; i < vc.y.size(); ++i)
      glp_set_obj_coef(lp, vc.y[i], -core_coef * vc.cores[i]);
    const int col = glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, col, GLP_DB, 0, *std::max_element(vc.th.begin(), vc.th.end()));
    glp_set_obj_coef(lp, col, InfAdapterAccuracyWeight(p) * p.variants[m].accuracy / target);
    l.lambda[m] = col;
    // lambda_m - sum_i th[i] y[i] <= 0
    const int cap = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, cap, GLP_UP, 0, 0);
    t.Add(cap, col, 1);
    for (size_t i = 0; i < vc.y.size(); ++i) t.Add(cap, vc.y[i], -vc.th[i]);
    if (std::find(vc.needs_load.begin(), vc.needs_load.end(), true) != vc.needs_load.end()) {
      unloaded.push_back(m);
    }
  }
  const int sum = glp_add_rows(lp, 1);  // sum_m lambda_m = lambda
  glp_set_row_bnds(lp, sum, GLP_FX, target, target);
  for (int col : l.lambda) {
    if (col != 0) t.Add(sum, col, 1);
  }
  if (!unloaded.empty()) {
    l.load = glp_add_cols(lp, 1);  // L
    glp_set_col_bnds(lp, l.load, GLP_LO, 0, 0);
    glp_set_obj_coef(lp, l.load, -load_coef);
    for (size_t m : unloaded) {
      // L - load_m * sum_{i must load} y[i] >= 0
      const int row = glp_add_rows(lp, 1);
      glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
      t.Add(row, l.load, 1);
      const VariantColumns& vc = l.v[m];
      for (size_t i = 0; i < vc.y.size(); ++i) {
        if (vc.needs_load[i]) t.Add(row, vc.y[i], -p.variants[m].load_time_s);
      }
    }
  }
  glp_load_matrix(lp, static_cast<int>(t.ia.size()) - 1, t.ia.data(), t.ja.data(), t.ar.data());
  return l;
}

// The heuristic's plan (infadapter/incumbent.h) from the solved root LP; pick and quotas
// per variant, pick as an index into variants[m].options. Empty pick: none found.
InfAdapterIncumbent FindIncumbent(glp_prob* lp, const InfAdapterProblem& p, const Layout& l,
                                  double target) {
  std::vector<InfAdapterIncumbentVariant> vars(l.v.size());
  for (size_t m = 0; m < l.v.size(); ++m) {
    const VariantColumns& vc = l.v[m];
    InfAdapterIncumbentVariant& iv = vars[m];
    iv.accuracy = p.variants[m].accuracy;
    iv.load_time_s = p.variants[m].load_time_s;
    iv.cores = vc.cores;
    iv.th = vc.th;
    iv.needs_load = vc.needs_load;
    for (size_t i = 0; i < vc.y.size(); ++i) {
      iv.lp_cores += vc.cores[i] * glp_get_col_prim(lp, vc.y[i]);
    }
  }
  const InfAdapterIncumbentWeights weights{InfAdapterAccuracyWeight(p) / target,
                                           p.weights.beta / InfAdapterCoreScale(p),
                                           p.weights.gamma / InfAdapterLoadScale(p)};
  InfAdapterIncumbent h = FindInfAdapterIncumbent(vars, target, p.budget_cores, weights);
  for (size_t m = 0; m < h.pick.size(); ++m) {
    if (h.pick[m] >= 0) h.pick[m] = l.v[m].option[h.pick[m]];
  }
  return h;
}

// The plan as column values of the model `l`; empty x if `l` lacks an option it uses.
Incumbent ToColumns(glp_prob* lp, const Layout& l, const InfAdapterIncumbent& h) {
  Incumbent inc;
  inc.x.assign(glp_get_num_cols(lp) + 1, 0.0);
  for (size_t m = 0; m < l.v.size(); ++m) {
    if (h.pick[m] < 0) continue;
    const VariantColumns& vc = l.v[m];
    const auto it = std::find(vc.option.begin(), vc.option.end(), h.pick[m]);
    if (it == vc.option.end()) return {};  // not in this model: no incumbent (not expected)
    inc.x[vc.used] = 1;
    inc.x[vc.y[it - vc.option.begin()]] = 1;
    inc.x[l.lambda[m]] = h.quotas[m];
  }
  if (l.load != 0) inc.x[l.load] = h.load_s;
  for (int j = 1; j < static_cast<int>(inc.x.size()); ++j) {
    inc.objective += glp_get_obj_coef(lp, j) * inc.x[j];
  }
  return inc;
}

// Reduced-cost fixing: root + d_j bounds every plan with y_j = 1 (d_j <= 0 at an optimal
// basis of a maximisation), so an option with root + d_j below the incumbent can only be
// in plans worse than it and is left out. Exact; the margin keeps GLPK's tolerances on
// the safe side. Typically 60-90% of the options go, which also tightens every node's LP.
Excluded ExcludeByReducedCost(glp_prob* lp, const InfAdapterProblem& p, const Layout& l,
                              double incumbent) {
  Excluded ex(p.variants.size());
  for (size_t m = 0; m < p.variants.size(); ++m) ex[m].assign(p.variants[m].options.size(), false);
  const double root = glp_get_obj_val(lp);
  const double margin = 1e-6 * std::max(1.0, std::abs(incumbent));
  for (size_t m = 0; m < l.v.size(); ++m) {
    const VariantColumns& vc = l.v[m];
    for (size_t i = 0; i < vc.y.size(); ++i) {
      if (glp_get_col_stat(lp, vc.y[i]) == GLP_NL &&
          root + glp_get_col_dual(lp, vc.y[i]) < incumbent - margin) {
        ex[m][vc.option[i]] = true;
      }
    }
  }
  return ex;
}

// Eq. 1 with lambda = target > 0: the root LP, a heuristic plan, then branch and bound on
// the model without the options reduced costs rule out, starting from that plan.
StatusOr<SolveResult> SolveEq1(const InfAdapterProblem& p, double target,
                               const InfAdapterMilpOptions& o) {
  Prob full(glp_create_prob());
  const Layout fl = BuildEq1(full.get(), p, target, nullptr);
  ASSIGN_OR_RETURN(const bool feasible, SolveRootLp(full.get()));
  if (!feasible) return SolveResult{};
  const InfAdapterIncumbent h = FindIncumbent(full.get(), p, fl, target);
  if (h.pick.empty()) return Solve(full.get(), fl, o, nullptr);
  const Excluded ex =
      ExcludeByReducedCost(full.get(), p, fl, ToColumns(full.get(), fl, h).objective);
  Prob reduced(glp_create_prob());
  const Layout rl = BuildEq1(reduced.get(), p, target, &ex);
  ASSIGN_OR_RETURN(const bool still_feasible, SolveRootLp(reduced.get()));
  if (!still_feasible) return InternalError("GLPK: reduced-cost fixing cut off the incumbent");
  Incumbent inc = ToColumns(reduced.get(), rl, h);
  return Solve(reduced.get(), rl, o, inc.x.empty() ? nullptr : &inc);
}

}  // namespace

StatusOr<double> InfAdapterMaxCapacity(const InfAdapterProblem& p, const InfAdapterMilpOptions& o) {
  RETURN_IF_ERROR(ValidateInfAdapterProblem(p));
  Prob lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  Triplets t;
  const Layout l = AddAssignment(lp.get(), p, std::numeric_limits<double>::infinity(), nullptr, t);
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
  ASSIGN_OR_RETURN(const bool lp_feasible, SolveRootLp(lp.get()));
  if (!lp_feasible) return InternalError("GLPK: the max-capacity LP has no solution");
  ASSIGN_OR_RETURN(SolveResult r, Solve(lp.get(), l, o, nullptr));
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
