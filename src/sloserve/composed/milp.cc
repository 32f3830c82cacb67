#include "sloserve/composed/milp.h"

#include <glpk.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace sloserve {
namespace {

struct GlpkProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// A row of the model: its coefficients, 1-based columns as GLPK takes them.
struct Row {
  std::vector<int> cols{0};
  std::vector<double> vals{0};
  void Add(int col, double v) {
    cols.push_back(col);
    vals.push_back(v);
  }
};

// Adds `row` with bounds (type as glp_set_row_bnds).
void AddRow(glp_prob* lp, const Row& row, int type, double lo, double hi) {
  const int r = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, r, type, lo, hi);
  glp_set_mat_row(lp, r, static_cast<int>(row.cols.size()) - 1, row.cols.data(), row.vals.data());
}

int AddColumn(glp_prob* lp, int kind, double lo, double hi, double objective) {
  const int col = glp_add_cols(lp, 1);
  glp_set_col_kind(lp, col, kind);
  if (kind != GLP_BV) glp_set_col_bnds(lp, col, lo < hi ? GLP_DB : GLP_FX, lo, hi);
  glp_set_obj_coef(lp, col, objective);
  return col;
}

enum class Form { kExact, kPenalised, kPenalisedNoMinimum };

struct Outcome {
  bool feasible = false;
  bool optimal = false;
  std::vector<int> workers;
};

StatusOr<Outcome> Solve(const ComposedProblem& p, Form form, const ComposedMilpOptions& o) {
  std::unique_ptr<glp_prob, GlpkProblemDeleter> owner(glp_create_prob());
  glp_prob* lp = owner.get();
  glp_set_obj_dir(lp, GLP_MAX);
  const size_t n = p.candidates.size();
  const size_t models = p.lambda_rps.size();
  const double total = ComposedTotalLoad(p);
  const ComposedWeights& w = p.weights;
  std::vector<int> x(n), lambda(n);
  std::vector<Row> per_model(models), at_least_one(models);
  std::vector<bool> has_candidates(models, false);
  Row budget, load_rows;
  std::vector<Row> per_type(p.max_workers.size());
  int load = 0;  // L, added on first use
  for (size_t i = 0; i < n; ++i) {
    const ComposedCandidate& c = p.candidates[i];
    const int u = ComposedMaxWorkers(p, i);
    x[i] = AddColumn(lp, GLP_IV, 0, u, -w.beta * c.price_per_hour / p.budget_usd_per_h);
    const double acc_coef = total > 0 ? w.alpha / 100.0 * c.accuracy / total : 0;
    lambda[i] = AddColumn(lp, GLP_CV, 0, p.lambda_rps[c.model], acc_coef);
    Row cap;  // lambda_c - headroom cap_c x_c <= 0
    cap.Add(lambda[i], 1);
    cap.Add(x[i], -p.headroom * c.capacity_rps);
    AddRow(lp, cap, GLP_UP, 0, 0);
    per_model[c.model].Add(lambda[i], 1);
    at_least_one[c.model].Add(x[i], 1);
    has_candidates[c.model] = true;
    budget.Add(x[i], c.price_per_hour);
    if (c.hardware < per_type.size()) per_type[c.hardware].Add(x[i], 1);
    if (c.load_time_s > 0 && u > c.current && w.gamma > 0) {
      if (load == 0) load = AddColumn(lp, GLP_CV, 0, 1e9, -w.gamma / ComposedLoadScale(p));
      const int z = AddColumn(lp, GLP_BV, 0, 1, 0);
      Row rises;  // x_c - (u - current) z_c <= current
      rises.Add(x[i], 1);
      rises.Add(z, -(u - c.current));
      AddRow(lp, rises, GLP_UP, 0, c.current);
      Row lc;  // L - load_c z_c >= 0
      lc.Add(load, 1);
      lc.Add(z, -c.load_time_s);
      AddRow(lp, lc, GLP_LO, 0, 0);
    }
  }
  for (size_t m = 0; m < models; ++m) {
    if (!has_candidates[m]) continue;  // unservable whatever the plan: no row
    const double l = p.lambda_rps[m];
    if (form != Form::kExact && l > 0) {
      const int s = AddColumn(lp, GLP_CV, 0, l, -w.shortfall_penalty / l);
      per_model[m].Add(s, 1);
      if (form == Form::kPenalised) AddRow(lp, at_least_one[m], GLP_LO, 1, 0);
    }
    AddRow(lp, per_model[m], GLP_FX, l, l);
  }
  if (n > 0) AddRow(lp, budget, GLP_UP, 0, p.budget_usd_per_h);
  for (size_t h = 0; h < per_type.size(); ++h) {
    if (p.max_workers[h] >= 0 && per_type[h].cols.size() > 1) {
      AddRow(lp, per_type[h], GLP_UP, 0, p.max_workers[h]);
    }
  }
  Outcome out;
  if (n == 0) {  // nothing to decide (no model can be served whatever the plan)
    out.feasible = true;
    out.optimal = true;
    return out;
  }
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = o.time_limit_ms;
  const int rc = glp_intopt(lp, &parm);
  if (rc == GLP_ENOPFS || rc == GLP_ENODFS) return out;  // the LP relaxation is infeasible
  if (rc != 0 && rc != GLP_ETMLIM) {
    return InternalError("GLPK glp_intopt failed with code " + std::to_string(rc));
  }
  const int status = glp_mip_status(lp);
  if (status == GLP_NOFEAS) return out;
  if (status != GLP_OPT && status != GLP_FEAS) {
    if (rc == GLP_ETMLIM) {
      return UnavailableError("GLPK found no feasible plan within " +
                              std::to_string(o.time_limit_ms) + " ms");
    }
    return InternalError("GLPK ended with MIP status " + std::to_string(status));
  }
  out.feasible = true;
  out.optimal = status == GLP_OPT;
  out.workers.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.workers[i] = static_cast<int>(std::lround(glp_mip_col_val(lp, x[i])));
  }
  return out;
}

}  // namespace

StatusOr<ComposedPlan> SolveComposedMilp(const ComposedProblem& p, const ComposedMilpOptions& o) {
  RETURN_IF_ERROR(ValidateComposedProblem(p));
  for (Form form : {Form::kExact, Form::kPenalised, Form::kPenalisedNoMinimum}) {
    if (form == Form::kPenalised && !p.min_one_worker) continue;
    ASSIGN_OR_RETURN(Outcome r, Solve(p, form, o));
    if (!r.feasible) continue;
    if (r.workers.empty()) r.workers.assign(p.candidates.size(), 0);
    ComposedPlan plan = EvaluateComposedChoice(p, r.workers, form != Form::kExact);
    plan.optimal = r.optimal;
    return plan;
  }
  return InternalError("GLPK: no plan, not even one without workers");
}

}  // namespace sloserve
