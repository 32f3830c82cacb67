#pragma once
// The composed planner (issue 32, docs/composed.md; docs/policies/composed.md): InfAdapter's
// adapter loop (EuroMLSys'23, section 4) over every model of a multi-model pool and every
// hardware type, under one $/h budget. Every `interval_s` it forecasts each model's load
// (PlanningInput::model_rate_history; the pool's history when the suite has one task),
// solves the composed problem (composed/problem.h: Eq. 1 across models, workers of
// (model, variant, hardware type) candidates whose capacity comes from the profiles at
// each model's SLO, composed/capacity.h) with the GLPK MILP, and rolls the solution out
// create-before-delete (rollout.h): one worker per planned worker of a candidate, on its
// hardware, dedicated to its model and pinned to its variant (or, for a model left
// unpinned, loaded with the model's planned variants and prefetching every other one its
// type profiles that memory holds, for its selection policy, e.g. RAMSIS, to choose among), with
// quota = its share of its model's load (a model's quotas sum to 1, for the `quota`
// dispatcher). Workers already serving a candidate are kept; the pool the config started
// with is replaced at the first plan. Scale-down waits for the stabilisation window
// (stabilized_forecast.h), per model.
//
// Options:
//   interval_s          seconds between solves (30)
//   budget_usd_per_h    the $/h budget (required, > 0)
//   slo_fraction        a worker's capacity counts batches whose p99 is within this
//                       fraction of the model's SLO (0.5)
//   headroom            fraction of that capacity a quota may use (0.8)
//   margin              forecasts are scaled by 1 + margin (0.1)
//   beta, gamma         Eq. 1's weights of cost (per budget) and loading time (0.05, 0.001)
//   forecaster, forecast_window_s, ewma_alpha, lstm_model   as infadapter's (moving_max),
//                       and `oracle` (sim only): the peak of each model's own arrivals
//                       over the next interval (PolicyContext::future_peak_qps)
//   stabilization_s     scale-down delay (60)
//   rollout_timeout_s   give up waiting for new workers after this (120)
//   time_limit_ms       per GLPK solve (2000)
//   max_workers         "type=N,...": most workers per hardware type ("" = the budget)
//   variants            planned | fixed: fixed allows per model one variant (planned)
//   fixed_variants      "model=variant,...": default per model its most accurate variant
//   hardware            planned | fixed: fixed allows per model one hardware type (planned)
//   fixed_hardware      "model=type,...": default the type with the most capacity per $
//                       for the model's fixed (else most accurate) variant
//   sizing              planned | static: static = each model an equal share of the
//                       budget as workers of its fixed variant on its fixed type, decided
//                       at the first plan and never changed (implies both fixed)
//   pin                 all | none | models left unpinned, comma-separated (all)
//   share               none | all | models whose workers are shared, comma-separated
//                       (none): plain machines of the planned types, not dedicated, not
//                       pinned, nothing loaded at start; a placement policy decides per
//                       query which of them serves (and loads) which model
//   unpinned_load       selectable | planned: what an unpinned model's worker loads
//                       (selectable): its planned variants before it serves, then every
//                       other variant its type profiles, most accurate first, prefetched
//                       while it is idle and memory holds them; planned = only the planned
//                       variants
// Solves run inline in sim and off the engine thread in serve (background_solve.h).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sloserve/composed/baselines.h"
#include "sloserve/composed/capacity.h"
#include "sloserve/composed/problem.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/planning/background_solve.h"
#include "sloserve/policy/planning/load_forecaster.h"
#include "sloserve/policy/planning/rollout.h"
#include "sloserve/policy/planning/stabilized_forecast.h"

namespace sloserve {

class ComposedPlanning : public PlanningPolicy {
 public:
  // name=value pairs as the options give them (resolved against the suite at Init).
  using Assignments = std::vector<std::pair<std::string, std::string>>;
  struct Options {
    Duration interval = Seconds(30);
    double budget_usd_per_h = 0;
    double slo_fraction = 0.5;
    double headroom = 0.8;
    double margin = 0.1;
    double beta = 0.05;
    double gamma = 0.001;
    ForecasterOptions forecaster;
    bool oracle = false;  // forecaster: oracle
    Duration stabilization = Seconds(60);
    Duration rollout_timeout = Seconds(120);
    int time_limit_ms = 2000;
    Assignments max_workers;  // type -> N
    bool fixed_variants = false;
    Assignments fixed_variant;  // model -> variant
    bool fixed_hardware = false;
    Assignments fixed_hardware_of;  // model -> type
    bool static_sizing = false;
    bool pin_none = false;              // pin: none
    std::vector<std::string> unpinned;  // pin: a list of models
    bool share_all = false;             // share: all
    std::vector<std::string> shared;    // share: a list of models
    bool load_planned_only = false;     // unpinned_load: planned
  };
  // One solve, for tests and reports.
  struct Solve {
    TimePoint at{};
    std::vector<double> forecast_rps;           // per model, after the margin and the window
    std::vector<ComposedCandidate> candidates;  // the problem's (current = workers then)
    ComposedPlan plan;                          // allocations parallel to `candidates`
  };

  static StatusOr<std::unique_ptr<PlanningPolicy>> Create(const PolicyParams& params);
  static StatusOr<Options> ParseOptions(const PolicyParams& params);
  explicit ComposedPlanning(Options o)
      : options_(std::move(o)), rollout_(options_.rollout_timeout) {}
  Status Init(const PolicyContext& ctx) override;
  void Plan(const PlanningInput& input, DeploymentPlan* out) override;

  const std::vector<Solve>& solves() const { return solves_; }
  const Options& options() const { return options_; }
  // After Init: the problem's candidates, budget and limits, restricted as configured;
  // lambda_rps and current counts are filled per solve.
  const ComposedProblem& problem() const { return problem_; }

 private:
  // The rate to provision for per model at `now`.
  std::vector<double> Forecast(const PlanningInput& input);
  // problem_ with `lambda` and the counts of candidates `workers` run now.
  ComposedProblem ProblemAt(const std::vector<double>& lambda,
                            const std::vector<WorkerView>& workers) const;
  // Solves `problem` inline, or (live) submits the solve and returns.
  void SolveAndRollOut(TimePoint now, std::vector<double> lambda, ComposedProblem problem,
                       const std::vector<WorkerView>& workers, DeploymentPlan* out);
  // Records the solve and starts the rollout of its plan.
  void RollOut(TimePoint now, std::vector<double> lambda, const ComposedProblem& problem,
               ComposedPlan plan, const std::vector<WorkerView>& workers, DeploymentPlan* out);
  // The workers of a plan: per model, pinned ones per candidate or unpinned ones per type.
  std::vector<RolloutTarget> Targets(const ComposedProblem& problem,
                                     const ComposedPlan& plan) const;

  Options options_;
  const ProfileSuite* suite_ = nullptr;
  std::unique_ptr<LoadForecaster> forecaster_;                           // null for the oracle
  std::function<double(TaskId, TimePoint, TimePoint)> future_peak_qps_;  // the oracle's
  std::vector<StabilizedForecast> stabilized_;                           // per model
  std::vector<bool> unpinned_;                                           // per model
  std::vector<bool> shared_;                                             // per model
  ComposedProblem problem_;
  CreateBeforeDelete rollout_;
  // Set when solves run off the engine thread (live), with what the solve is for.
  std::optional<BackgroundSolve<ComposedPlan>> background_;
  std::vector<double> background_lambda_;
  ComposedProblem background_problem_;
  TimePoint next_solve_{};
  bool static_done_ = false;
  std::vector<Solve> solves_;
};

}  // namespace sloserve
