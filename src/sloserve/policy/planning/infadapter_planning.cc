#include "sloserve/policy/planning/infadapter_planning.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "sloserve/infadapter/dp.h"
#include "sloserve/infadapter/milp.h"
#include "sloserve/policy/common_options.h"
#include "sloserve/policy/planning/planning_options.h"

namespace sloserve {
namespace infadapter_options {
// Options every pool-rebuilding planner reads alike (planning_options.h), then its own.
using namespace planning_options;  // NOLINT(google-build-using-namespace)
const KeyDecl kBudgetCores{.name = "budget_cores",
                           .type = KeyType::kInteger,
                           .default_value = "20",
                           .unit = "cores",
                           .min = 1,
                           .max = 4096,
                           .help = "B, the core budget"};
const KeyDecl kMinCores{.name = "min_cores",
                        .type = KeyType::kInteger,
                        .default_value = "1",
                        .unit = "cores",
                        .min = 1,
                        .max = 4096,
                        .help = "smallest core count of a variant used (at most budget_cores)"};
const KeyDecl kMaxCores{.name = "max_cores",
                        .type = KeyType::kInteger,
                        .default_value = "0",
                        .unit = "cores",
                        .min = 0,
                        .max = 2'147'483'647,
                        .help =
                            "largest core count of a variant (0 = the budget; else >= "
                            "min_cores)"};
const KeyDecl kVpaMargin{.name = "margin",
                         .type = KeyType::kNumber,
                         .default_value = "0.15",
                         .min = 0,
                         .max = 10,
                         .help = "the forecast is scaled by 1 + margin"};
const KeyDecl kSolver{.name = "solver",
                      .type = KeyType::kChoice,
                      .default_value = "milp",
                      .choices = {"milp", "dp"},
                      .help = "Eq. 1 by the GLPK MILP or the exact DP (same optimum)"};
const KeyDecl kVpaForecaster{.name = "forecaster",
                             .type = KeyType::kString,
                             .default_value = "last_value",
                             .help = "load forecaster: moving_max, last_value, ewma or lstm"};
const KeyDecl kVpaStabilizationS{.name = "stabilization_s",
                                 .type = KeyType::kNumber,
                                 .default_value = "300",
                                 .unit = "s",
                                 .min = 0,
                                 .max = 86400,
                                 .help = "scale-down delay"};
}  // namespace infadapter_options

StatusOr<std::unique_ptr<PlanningPolicy>> InfAdapterPlanning::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(Options o, ParseOptions(p, Method::kInfAdapter));
  return std::unique_ptr<PlanningPolicy>(new InfAdapterPlanning(std::move(o)));
}

StatusOr<std::unique_ptr<PlanningPolicy>> InfAdapterPlanning::CreateMsPlus(const PolicyParams& p) {
  ASSIGN_OR_RETURN(Options o, ParseOptions(p, Method::kMsPlus));
  return std::unique_ptr<PlanningPolicy>(new InfAdapterPlanning(std::move(o)));
}

StatusOr<std::unique_ptr<PlanningPolicy>> InfAdapterPlanning::CreateVpaPlus(const PolicyParams& p) {
  ASSIGN_OR_RETURN(Options o, ParseOptions(p, Method::kVpaPlus));
  return std::unique_ptr<PlanningPolicy>(new InfAdapterPlanning(std::move(o)));
}

StatusOr<InfAdapterPlanning::Options> InfAdapterPlanning::ParseOptions(const PolicyParams& p,
                                                                       Method method) {
  const bool vpa = method == Method::kVpaPlus;
  const std::string name = method == Method::kInfAdapter ? "infadapter"
                           : method == Method::kMsPlus   ? "ms_plus"
                                                         : "vpa_plus";
  Options o;
  o.method = method;
  namespace opt = infadapter_options;
  // The options are all read before any check: the registry learns them by running this.
  auto bad = [&](const std::string& what) { return InvalidArgumentError(name + ": " + what); };
  if (vpa) {
    ASSIGN_OR_RETURN(o.variant, p.GetString(kVariantOption));
  }
  ASSIGN_OR_RETURN(double interval_s, p.GetDouble(opt::kIntervalS));
  ASSIGN_OR_RETURN(int64_t budget, p.GetInt(opt::kBudgetCores));
  ASSIGN_OR_RETURN(int64_t min_cores, p.GetInt(opt::kMinCores));
  ASSIGN_OR_RETURN(int64_t max_cores, p.GetInt(opt::kMaxCores));
  ASSIGN_OR_RETURN(o.headroom, p.GetDouble(opt::kHeadroom));
  StatusOr<double> beta = p.GetDouble(opt::kBeta);
  // Accuracy enters Eq. 1 as a fraction (the reference code's units), so beta = 1 already
  // prices the whole budget at 100 accuracy points; larger values only made sense when
  // accuracy was in percent (before 2026-11-29), where they meant beta / 100 now.
  if (!beta.ok()) {
    const auto it = p.values().find(opt::kBeta.name);
    const std::optional<double> old =
        it == p.values().end() ? std::nullopt : ParseNumber(it->second);
    if (!old || *old <= 1) return beta.status();
    return InvalidArgumentError(
        beta.status().message() +
        " (the whole budget's cost, as a fraction of accuracy: 0.05 = 5 accuracy points); a "
        "value written for the old percent units means beta / 100 now (" +
        std::to_string(*old / 100) + ")");
  }
  o.weights.beta = *beta;
  ASSIGN_OR_RETURN(o.weights.gamma, p.GetDouble(opt::kGamma));
  ASSIGN_OR_RETURN(o.margin, p.GetDouble(vpa ? opt::kVpaMargin : opt::kMargin));
  ASSIGN_OR_RETURN(const std::string solver, p.GetString(opt::kSolver));
  ASSIGN_OR_RETURN(o.forecaster.kind, p.GetString(vpa ? opt::kVpaForecaster : opt::kForecaster));
  ASSIGN_OR_RETURN(int64_t window, p.GetInt(opt::kForecastWindowS));
  ASSIGN_OR_RETURN(o.forecaster.ewma_alpha, p.GetDouble(opt::kEwmaAlpha));
  ASSIGN_OR_RETURN(o.forecaster.model_path, p.GetString(opt::kLstmModel));
  ASSIGN_OR_RETURN(double stabilization_s,
                   p.GetDouble(vpa ? opt::kVpaStabilizationS : opt::kStabilizationS));
  ASSIGN_OR_RETURN(double timeout_s, p.GetDouble(opt::kRolloutTimeoutS));
  if (vpa && o.variant.empty()) return bad("option 'variant' is required (the variant it scales)");
  if (min_cores > budget) return bad("option 'min_cores' must be 1..budget_cores");
  if (max_cores > 0 && max_cores < min_cores)
    return bad("option 'max_cores' must be 0 (the budget) or >= min_cores");
  o.dp_solver = solver == "dp";
  o.interval = SecondsF(interval_s);
  o.budget_cores = static_cast<int>(budget);
  o.min_cores = static_cast<int>(min_cores);
  o.max_cores = static_cast<int>(max_cores);
  o.forecaster.window_s = static_cast<int>(window);
  o.stabilization = SecondsF(stabilization_s);
  o.rollout_timeout = SecondsF(timeout_s);
  auto forecaster = MakeLoadForecaster(o.forecaster);
  if (!forecaster.ok()) return bad(forecaster.status().message());
  return o;
}

Status InfAdapterPlanning::Init(const PolicyContext& ctx) {
  const ProfileSuite& suite = *ctx.suite;
  ASSIGN_OR_RETURN(forecaster_, MakeLoadForecaster(options_.forecaster));
  // A live server solves off the engine thread; sim solves inline (a solve takes no
  // virtual time, and the results must not depend on how long it takes).
  background_.reset();
  if (ctx.live && ctx.submit_offline) background_.emplace(ctx.submit_offline);
  InfAdapterCapacityOptions co;
  co.slo = ctx.slo;
  co.headroom = options_.headroom;
  if (ctx.task < suite.tasks().size()) co.task = suite.tasks()[ctx.task].name;
  auto model = BuildInfAdapterCapacity(suite, co);
  if (!model.ok()) return model.status().WithPrefix("infadapter");
  model_ = std::move(*model);
  // A capacity table with gaps is usable, but say what was filled in.
  for (const std::string& note : model_.notes)
    std::fprintf(stderr, "sloserve: infadapter: capacity interpolated: %s\n", note.c_str());
  if (options_.method == Method::kVpaPlus) {
    vpa_variant_ = model_.variants.size();
    for (size_t m = 0; m < model_.variants.size(); ++m) {
      if (model_.variants[m].name == options_.variant) vpa_variant_ = m;
    }
    if (vpa_variant_ == model_.variants.size()) {
      std::string names;
      for (const auto& v : model_.variants) names += (names.empty() ? "" : ", ") + v.name;
      return InvalidArgumentError("vpa_plus: option 'variant': '" + options_.variant +
                                  "' is not a variant of suite " + suite.name() +
                                  " (variants: " + names + ")");
    }
  }
  // A variant runs with k cores on the hardware type that has k (infadapter-resnet:
  // cpu-<k>c); core counts without one are not offered to the solver.
  hardware_by_cores_.assign(static_cast<size_t>(options_.budget_cores) + 1, kNoId);
  bool any = false;
  for (HardwareId h = 0; h < suite.hardware().size(); ++h) {
    const int k = suite.hardware()[h].cores;
    if (k >= 1 && k <= options_.budget_cores && hardware_by_cores_[k] == kNoId) {
      hardware_by_cores_[k] = h;
      any = true;
    }
  }
  if (!any) {
    return InvalidArgumentError("infadapter: suite " + suite.name() +
                                " has no hardware type with 1..budget_cores (" +
                                std::to_string(options_.budget_cores) + ") cores");
  }
  return OkStatus();
}

void InfAdapterPlanning::Plan(const PlanningInput& input, DeploymentPlan* out) {
  const std::vector<WorkerView>& workers = *input.workers;
  if (rollout_.in_progress()) {
    // Create before delete: the old deployment serves until every new worker is active.
    rollout_.Continue(input.now, workers, out);
    return;
  }
  if (background_ && background_->busy()) {
    std::optional<StatusOr<InfAdapterPlan>> plan = background_->TakeResult();
    if (!plan) return;  // the solver still runs off the engine thread
    if (plan->ok()) RollOut(input.now, background_lambda_, **plan, workers, out);
    return;
  }
  if (input.now < next_solve_) return;
  next_solve_ = input.now + options_.interval;
  SolveAndRollOut(input, out);
}

void InfAdapterPlanning::SolveAndRollOut(const PlanningInput& input, DeploymentPlan* out) {
  const std::vector<WorkerView>& workers = *input.workers;
  // The rate to provision for: the forecast with its margin; scale-down waits for the
  // stabilisation window (the largest such rate within it).
  double lambda = stabilized_.Next(input.now, forecaster_->Forecast(input.rate_history));
  lambda = std::max(lambda, 1.0);  // always keep a variant deployed (1 rps at least)

  std::map<VariantId, std::set<int>> loaded;
  for (const WorkerView& w : workers) {
    if (w.phase != WorkerPhase::kActive || w.pinned == kNoId) continue;
    // Deployed at this core count: keeping it there loads nothing (LC).
    for (size_t k = 1; k < hardware_by_cores_.size(); ++k) {
      if (hardware_by_cores_[k] == w.hardware) loaded[w.pinned].insert(static_cast<int>(k));
    }
  }
  auto problem = ProblemFor(lambda, loaded);
  if (!problem.ok()) return;  // options were checked at Create: keep the deployment
  if (background_) {
    // Live: the solve runs off the engine thread (PolicyContext::submit_offline); its plan
    // is rolled out at the first Plan call after it is published. The job reads only
    // its own copies, so it may outlive this policy (the publish step then does nothing).
    background_lambda_ = lambda;
    background_->Submit(
        "InfAdapter solve for " + std::to_string(lambda) + " rps",
        [solver = solver(), problem = std::move(*problem)] { return solver.Decide(problem); });
    return;
  }
  auto plan = solver().Decide(*problem);
  if (!plan.ok()) return;
  RollOut(input.now, lambda, *plan, workers, out);
}

void InfAdapterPlanning::RollOut(TimePoint now, double lambda, const InfAdapterPlan& plan,
                                 const std::vector<WorkerView>& workers, DeploymentPlan* out) {
  solves_.push_back({now, lambda, plan});

  std::vector<RolloutTarget> targets;
  for (size_t m = 0; m < plan.allocations.size(); ++m) {
    const InfAdapterAllocation& a = plan.allocations[m];
    if (a.cores <= 0) continue;
    RolloutTarget t;
    t.pinned = model_.variants[m].variant;
    t.cores = a.cores;
    t.hardware = hardware_by_cores_[a.cores];
    t.quota = a.quota_rps;
    targets.push_back(t);
  }
  rollout_.Start(now, std::move(targets), workers, out);
}

StatusOr<InfAdapterProblem> InfAdapterPlanning::ProblemFor(
    double lambda_rps, const std::map<VariantId, std::set<int>>& loaded) const {
  if (hardware_by_cores_.empty()) return FailedPreconditionError("infadapter: not initialised");
  InfAdapterRequest r;
  r.lambda_rps = lambda_rps;
  r.budget_cores = options_.budget_cores;
  r.min_cores = options_.min_cores;
  r.max_cores = options_.max_cores;
  r.weights = options_.weights;
  r.loaded = loaded;
  ASSIGN_OR_RETURN(InfAdapterProblem problem, MakeInfAdapterProblem(model_, r));
  for (InfAdapterCandidate& c : problem.variants) {
    std::erase_if(c.options, [&](const InfAdapterCoreOption& o) {
      return o.cores >= static_cast<int>(hardware_by_cores_.size()) ||
             hardware_by_cores_[o.cores] == kNoId;
    });
  }
  return problem;
}

StatusOr<InfAdapterPlan> InfAdapterPlanning::PlanFor(
    double lambda_rps, const std::map<VariantId, std::set<int>>& loaded) const {
  ASSIGN_OR_RETURN(InfAdapterProblem problem, ProblemFor(lambda_rps, loaded));
  return solver().Decide(problem);
}

StatusOr<InfAdapterPlan> InfAdapterPlanning::Solver::SolveEq1(
    const InfAdapterProblem& problem) const {
  return options.dp_solver ? SolveInfAdapterDp(problem) : SolveInfAdapterMilp(problem);
}

StatusOr<InfAdapterPlan> InfAdapterPlanning::Solver::Decide(
    const InfAdapterProblem& problem) const {
  switch (options.method) {
    case Method::kInfAdapter:
      return SolveEq1(problem);
    case Method::kMsPlus: {
      // One variant at a time: each solved alone; the best keeps the least shortfall,
      // then the highest objective.
      std::optional<InfAdapterPlan> best;
      for (size_t m = 0; m < problem.variants.size(); ++m) {
        if (problem.variants[m].options.empty()) continue;
        InfAdapterProblem alone = problem;
        for (size_t j = 0; j < alone.variants.size(); ++j) {
          if (j != m) alone.variants[j].options.clear();
        }
        ASSIGN_OR_RETURN(InfAdapterPlan plan, SolveEq1(alone));
        if (!best || plan.shortfall_rps < best->shortfall_rps - 1e-9 ||
            (plan.shortfall_rps <= best->shortfall_rps + 1e-9 &&
             plan.objective > best->objective)) {
          best = std::move(plan);
        }
      }
      if (!best) return FailedPreconditionError("ms_plus: no variant can meet the SLO");
      return *best;
    }
    case Method::kVpaPlus: {
      // The fewest cores whose capacity covers the rate; all of them when none does.
      const std::vector<InfAdapterCoreOption>& opts = problem.variants[vpa_variant].options;
      if (opts.empty()) {
        return FailedPreconditionError("vpa_plus: variant '" + options.variant +
                                       "' meets the SLO at no core count within the budget");
      }
      int pick = static_cast<int>(opts.size()) - 1;
      for (size_t i = 0; i < opts.size(); ++i) {
        if (opts[i].throughput_rps >= problem.lambda_rps) {
          pick = static_cast<int>(i);
          break;
        }
      }
      std::vector<int> choice(problem.variants.size(), -1);
      choice[vpa_variant] = pick;
      InfAdapterPlan plan = EvaluateInfAdapterChoice(problem, choice, problem.lambda_rps);
      plan.shortfall_rps = std::max(0.0, problem.lambda_rps - plan.served_rps);
      return plan;
    }
  }
  return InternalError("infadapter: unknown method");
}

}  // namespace sloserve
