#pragma once
// InfAdapter's adapter loop (EuroMLSys'23, section 4; docs/infadapter.md) as a planning
// policy. Every `interval_s` it forecasts the load, solves Eq. 1 (the GLPK MILP)
// for that rate within the core budget, and turns the solution into a deployment: one
// worker per variant used, on the hardware type with that many cores (the suite's
// cpu-<N>c), pinned to the variant, with the variant's quota (for the `quota`
// dispatcher). Reconfiguration is create-before-delete: workers the new solution needs
// are added first and serve only after their load result (the engine's lifecycle); only
// once all of them are active do the old ones drain and get removed, and the quotas
// switch. Scale-down is delayed by a stabilisation window: the rate solved for is the
// largest forecast of the last `stabilization_s` seconds.
// Registered as `infadapter`, `ms_plus` and `vpa_plus` (Method below).
// Options (defaults: the paper's and its reference code's):
//   interval_s         seconds between solves (30)
//   budget_cores       B, the core budget (20)
//   min_cores          smallest core count of a used variant (1)
//   max_cores          largest (0 = the budget)
//   headroom           fraction of the fitted capacity used (0.8)
//   beta, gamma        weights of cores (per budget) and loading cost (per largest load
//                      time) against accuracy as a fraction (0.05, 0.001; alpha is 1;
//                      beta 0..1)
//   margin             the forecast is scaled by 1 + margin before the solver (0.1)
//   solver             milp | dp: Eq. 1 by the GLPK MILP (infadapter/milp.h) or by the
//                      exact DP (infadapter/dp.h); the same optimum (milp)
//   forecaster         moving_max | last_value | ewma | lstm (moving_max; load_forecaster.h)
//   forecast_window_s  moving_max's window (60)
//   lstm_model         lstm's TorchScript file (models/forecast/twitter_lstm.pt)
//   stabilization_s    scale-down delay (60; 0 = none)
//   rollout_timeout_s  give up waiting for new workers after this (120)
//   variant            vpa_plus only: the variant it scales (required)
// vpa_plus's defaults differ where VPA's do: forecaster last_value, margin 0.15 (VPA's
// safety margin), stabilization_s 300.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "sloserve/infadapter/capacity.h"
#include "sloserve/infadapter/problem.h"
#include "sloserve/policy/interfaces.h"
#include "sloserve/policy/planning/background_solve.h"
#include "sloserve/policy/planning/load_forecaster.h"
#include "sloserve/policy/planning/rollout.h"
#include "sloserve/policy/planning/stabilized_forecast.h"

namespace sloserve {

class InfAdapterPlanning : public PlanningPolicy {
 public:
  // What decides the deployment at each solve (the rollout is the same for all three):
  //   kInfAdapter  Eq. 1 over every variant (a set of variants)
  //   kMsPlus      the paper's MS+ baseline: Eq. 1 restricted to one variant at a time
  //                (each variant solved alone, the best objective kept)
  //   kVpaPlus     the paper's VPA+ baseline: one fixed variant (`variant`), its cores
  //                the fewest whose capacity covers the recommended rate (a VPA-style
  //                recommender: the forecast of the observed rate plus `margin`)
  enum class Method { kInfAdapter, kMsPlus, kVpaPlus };
  struct Options {
    Method method = Method::kInfAdapter;
    std::string variant;  // kVpaPlus
    Duration interval = Seconds(30);
    int budget_cores = 20;
    int min_cores = 1;
    int max_cores = 0;
    double headroom = 0.8;
    InfAdapterWeights weights;
    double margin = 0.1;
    bool dp_solver = false;  // `solver` dp: SolveInfAdapterDp instead of the MILP
    ForecasterOptions forecaster;
    Duration stabilization = Seconds(60);
    Duration rollout_timeout = Seconds(120);
  };
  // One solve, for tests and reports.
  struct Solve {
    TimePoint at{};
    double forecast_rps = 0;  // after the margin and the stabilisation window
    InfAdapterPlan plan;
  };

  static StatusOr<std::unique_ptr<PlanningPolicy>> Create(const PolicyParams& params);
  static StatusOr<std::unique_ptr<PlanningPolicy>> CreateMsPlus(const PolicyParams& params);
  static StatusOr<std::unique_ptr<PlanningPolicy>> CreateVpaPlus(const PolicyParams& params);
  static StatusOr<Options> ParseOptions(const PolicyParams& params, Method method);
  explicit InfAdapterPlanning(Options o)
      : options_(std::move(o)),
        stabilized_(options_.margin, options_.stabilization),
        rollout_(options_.rollout_timeout) {}
  Status Init(const PolicyContext& ctx) override;
  void Plan(const PlanningInput& input, DeploymentPlan* out) override;

  const std::vector<Solve>& solves() const { return solves_; }

  // The method's plan for the rate `lambda_rps` (what Eq. 1 serves: a running policy
  // passes its forecast after the margin and the stabilisation window) with `loaded`
  // deployed (variant -> core counts), exactly as a solve in Plan decides it, without
  // a rollout. After Init. For `sloserve plan infadapter` and tests.
  StatusOr<InfAdapterPlan> PlanFor(double lambda_rps,
                                   const std::map<VariantId, std::set<int>>& loaded) const;
  // The problem PlanFor solves (core counts limited to the suite's hardware types).
  StatusOr<InfAdapterProblem> ProblemFor(double lambda_rps,
                                         const std::map<VariantId, std::set<int>>& loaded) const;
  const InfAdapterCapacityModel& capacity_model() const { return model_; }
  const Options& options() const { return options_; }

 private:
  // What decides a plan from a problem: copies of the immutable options, so a solve
  // can run off the engine thread without touching the policy.
  struct Solver {
    Options options;
    size_t vpa_variant = 0;
    // The method's plan for `problem` (core options already limited to deployable ones).
    StatusOr<InfAdapterPlan> Decide(const InfAdapterProblem& problem) const;
    // Eq. 1 by the configured solver.
    StatusOr<InfAdapterPlan> SolveEq1(const InfAdapterProblem& problem) const;
  };
  Solver solver() const { return Solver{options_, vpa_variant_}; }
  // Forecasts and solves: inline, or (live) submits the solve and returns.
  void SolveAndRollOut(const PlanningInput& input, DeploymentPlan* out);
  // Turns a solved plan into the deployment: new workers first (create before delete).
  void RollOut(TimePoint now, double lambda, const InfAdapterPlan& plan,
               const std::vector<WorkerView>& workers, DeploymentPlan* out);

  Options options_;
  // Set when solves run off the engine thread (live), with the rate being solved for.
  std::optional<BackgroundSolve<InfAdapterPlan>> background_;
  double background_lambda_ = 0;
  std::unique_ptr<LoadForecaster> forecaster_;
  InfAdapterCapacityModel model_;
  size_t vpa_variant_ = 0;                     // kVpaPlus: index of `variant` in model_.variants
  std::vector<HardwareId> hardware_by_cores_;  // [k] = hardware with k cores, or kNoId
  TimePoint next_solve_{};
  StabilizedForecast stabilized_;
  CreateBeforeDelete rollout_;
  std::vector<Solve> solves_;
};

}  // namespace sloserve
