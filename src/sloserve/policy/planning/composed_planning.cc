#include "sloserve/policy/planning/composed_planning.h"

#include "sloserve/policy/name_value_list.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "sloserve/composed/milp.h"
#include "sloserve/policy/planning/planning_options.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace composed_options {
using namespace planning_options;  // NOLINT(google-build-using-namespace)
const KeyDecl kBudget{.name = "budget_usd_per_h",
                      .type = KeyType::kNumber,
                      .unit = "$/h",
                      .min = 0,
                      .max = 1e9,
                      .min_exclusive = true,
                      .help = "the $/h budget of the whole pool (required)"};
const KeyDecl kSloFraction{.name = "slo_fraction",
                           .type = KeyType::kNumber,
                           .default_value = "0.5",
                           .min = 0,
                           .max = 1,
                           .min_exclusive = true,
                           .help =
                               "a worker's capacity counts batches whose p99 is within "
                               "this fraction of its model's SLO"};
const KeyDecl kTimeLimitMs{.name = "time_limit_ms",
                           .type = KeyType::kInteger,
                           .default_value = "2000",
                           .unit = "ms",
                           .min = 1,
                           .max = 600000,
                           .help = "time limit of one GLPK solve (then its best plan)"};
const KeyDecl kMaxWorkers{.name = "max_workers",
                          .type = KeyType::kString,
                          .help =
                              "most workers per hardware type, \"type=N,...\" (unset: the "
                              "budget limits)"};
// Not `variants`: selection policies take a variant list of that name, and a spec that
// combines one with `composed` would share the key.
const KeyDecl kVariants{.name = "variant_mode",
                        .type = KeyType::kChoice,
                        .default_value = "planned",
                        .choices = {"planned", "fixed"},
                        .help = "fixed: per model one allowed variant"};
const KeyDecl kFixedVariants{.name = "fixed_variants",
                             .type = KeyType::kString,
                             .help =
                                 "\"model=variant,...\"; default per model its most "
                                 "accurate variant"};
const KeyDecl kHardware{.name = "hardware_mode",
                        .type = KeyType::kChoice,
                        .default_value = "planned",
                        .choices = {"planned", "fixed"},
                        .help = "fixed: per model one allowed hardware type"};
const KeyDecl kFixedHardware{.name = "fixed_hardware",
                             .type = KeyType::kString,
                             .help =
                                 "\"model=type,...\"; default the type with the most "
                                 "capacity per $ for the model's fixed variant"};
const KeyDecl kSizing{.name = "sizing",
                      .type = KeyType::kChoice,
                      .default_value = "planned",
                      .choices = {"planned", "static"},
                      .help =
                          "static: an equal share of the budget per model, fixed variant "
                          "and type, decided once"};
const KeyDecl kPin{.name = "pin",
                   .type = KeyType::kString,
                   .default_value = "all",
                   .help =
                       "all | none | models left unpinned (comma-separated): an unpinned "
                       "model's workers load its planned variants and its selection "
                       "policy chooses"};
const KeyDecl kShare{.name = "share",
                     .type = KeyType::kString,
                     .default_value = "none",
                     .help =
                         "none | all | models whose workers are shared (comma-separated): "
                         "neither dedicated nor pinned nor loaded at start; they serve every "
                         "model their hardware profiles and load on demand (pair with a "
                         "placement policy); overrides pin"};
const KeyDecl kUnpinnedLoad{.name = "unpinned_load",
                            .type = KeyType::kChoice,
                            .default_value = "selectable",
                            .choices = {"selectable", "planned"},
                            .help =
                                "what an unpinned model's worker loads: selectable = its "
                                "planned variants before it serves, then every other "
                                "variant its type profiles, most accurate first, "
                                "prefetched while it is idle, as many as memory holds (its "
                                "selection policy may run any of them); planned = only the "
                                "planned variants"};
}  // namespace composed_options

namespace {

// The model (task) named `name`, else an error naming the option.
StatusOr<TaskId> FindModel(const ProfileSuite& suite, const std::string& name,
                           const std::string& option) {
  if (std::optional<TaskId> t = suite.FindTask(name)) return *t;
  return InvalidArgumentError("composed: option '" + option + "': no model '" + name +
                              "' in suite " + suite.name());
}

// Model m's variant `name`: its full name, or its name within the model ("MODEL/name").
StatusOr<VariantId> FindModelVariant(const ProfileSuite& suite, TaskId m, const std::string& name) {
  for (const std::string& full : {name, suite.tasks()[m].name + "/" + name}) {
    std::optional<VariantId> v = suite.FindVariant(full);
    if (v && suite.variants()[*v].task == m) return *v;
  }
  return InvalidArgumentError("composed: option 'fixed_variants': model '" + suite.tasks()[m].name +
                              "' has no variant '" + name + "'");
}

StatusOr<HardwareId> FindType(const ProfileSuite& suite, const std::string& name,
                              const std::string& option) {
  if (std::optional<HardwareId> h = suite.FindHardware(name)) return *h;
  return InvalidArgumentError("composed: option '" + option + "': no hardware type '" + name +
                              "' in suite " + suite.name());
}

}  // namespace

StatusOr<std::unique_ptr<PlanningPolicy>> ComposedPlanning::Create(const PolicyParams& p) {
  ASSIGN_OR_RETURN(Options o, ParseOptions(p));
  return std::unique_ptr<PlanningPolicy>(new ComposedPlanning(std::move(o)));
}

StatusOr<ComposedPlanning::Options> ComposedPlanning::ParseOptions(const PolicyParams& p) {
  namespace opt = composed_options;
  Options o;
  // The options are all read before any check: the registry learns them by running this.
  ASSIGN_OR_RETURN(double interval_s, p.GetDouble(opt::kIntervalS));
  StatusOr<double> budget = p.GetDouble(opt::kBudget);
  ASSIGN_OR_RETURN(o.slo_fraction, p.GetDouble(opt::kSloFraction));
  ASSIGN_OR_RETURN(o.headroom, p.GetDouble(opt::kHeadroom));
  ASSIGN_OR_RETURN(o.margin, p.GetDouble(opt::kMargin));
  ASSIGN_OR_RETURN(o.beta, p.GetDouble(opt::kBeta));
  ASSIGN_OR_RETURN(o.gamma, p.GetDouble(opt::kGamma));
  ASSIGN_OR_RETURN(o.forecaster.kind, p.GetString(opt::kForecaster));
  ASSIGN_OR_RETURN(int64_t window, p.GetInt(opt::kForecastWindowS));
  ASSIGN_OR_RETURN(o.forecaster.ewma_alpha, p.GetDouble(opt::kEwmaAlpha));
  ASSIGN_OR_RETURN(o.forecaster.model_path, p.GetString(opt::kLstmModel));
  ASSIGN_OR_RETURN(double stabilization_s, p.GetDouble(opt::kStabilizationS));
  ASSIGN_OR_RETURN(double timeout_s, p.GetDouble(opt::kRolloutTimeoutS));
  ASSIGN_OR_RETURN(int64_t time_limit, p.GetInt(opt::kTimeLimitMs));
  ASSIGN_OR_RETURN(const std::string max_workers, p.GetString(opt::kMaxWorkers));
  ASSIGN_OR_RETURN(const std::string variants, p.GetString(opt::kVariants));
  ASSIGN_OR_RETURN(const std::string fixed_variants, p.GetString(opt::kFixedVariants));
  ASSIGN_OR_RETURN(const std::string hardware, p.GetString(opt::kHardware));
  ASSIGN_OR_RETURN(const std::string fixed_hardware, p.GetString(opt::kFixedHardware));
  ASSIGN_OR_RETURN(const std::string sizing, p.GetString(opt::kSizing));
  ASSIGN_OR_RETURN(const std::string pin, p.GetString(opt::kPin));
  ASSIGN_OR_RETURN(const std::string share, p.GetString(opt::kShare));
  ASSIGN_OR_RETURN(const std::string unpinned_load, p.GetString(opt::kUnpinnedLoad));
  if (!budget.ok()) return budget.status();
  o.budget_usd_per_h = *budget;
  o.interval = SecondsF(interval_s);
  o.forecaster.window_s = static_cast<int>(window);
  o.stabilization = SecondsF(stabilization_s);
  o.rollout_timeout = SecondsF(timeout_s);
  o.time_limit_ms = static_cast<int>(time_limit);
  o.static_sizing = sizing == "static";
  o.load_planned_only = unpinned_load == "planned";
  o.fixed_variants = variants == "fixed" || o.static_sizing;
  o.fixed_hardware = hardware == "fixed" || o.static_sizing;
  // A dependent option without what it depends on would be silently ignored.
  if (!fixed_variants.empty() && !o.fixed_variants) {
    return InvalidArgumentError(
        "composed: option 'fixed_variants' needs variant_mode: fixed (or sizing: static)");
  }
  if (!fixed_hardware.empty() && !o.fixed_hardware) {
    return InvalidArgumentError(
        "composed: option 'fixed_hardware' needs hardware_mode: fixed (or sizing: static)");
  }
  ASSIGN_OR_RETURN(o.max_workers,
                   ParseNameValueList(max_workers, "composed: option 'max_workers'"));
  ASSIGN_OR_RETURN(o.fixed_variant,
                   ParseNameValueList(fixed_variants, "composed: option 'fixed_variants'"));
  ASSIGN_OR_RETURN(o.fixed_hardware_of,
                   ParseNameValueList(fixed_hardware, "composed: option 'fixed_hardware'"));
  if (pin == "none") {
    o.pin_none = true;
  } else if (pin != "all") {
    o.unpinned = ListItems(pin);
    if (o.unpinned.empty()) {
      return InvalidArgumentError("composed: option 'pin' must be all, none or a list of models");
    }
  }
  if (share == "all") {
    o.share_all = true;
  } else if (share != "none") {
    o.shared = ListItems(share);
    if (o.shared.empty()) {
      return InvalidArgumentError("composed: option 'share' must be none, all or a list of models");
    }
  }
  for (const auto& [type, n] : o.max_workers) {
    const std::optional<int64_t> count = ParseInteger(n);
    if (!count || *count < 0 || *count > 1'000'000) {
      return InvalidArgumentError("composed: option 'max_workers': '" + type + "=" + n +
                                  "' needs a whole number of workers >= 0");
    }
  }
  o.oracle = o.forecaster.kind == "oracle";
  if (!o.oracle) {
    auto forecaster = MakeLoadForecaster(o.forecaster);
    if (!forecaster.ok()) {
      return InvalidArgumentError("composed: " + forecaster.status().message() +
                                  " (or oracle, in sim)");
    }
  }
  return o;
}

Status ComposedPlanning::Init(const PolicyContext& ctx) {
  suite_ = ctx.suite;
  const ProfileSuite& suite = *ctx.suite;
  const size_t models = suite.tasks().size();
  if (models == 0)
    return FailedPreconditionError("composed: suite " + suite.name() + " has no model");
  forecaster_.reset();
  future_peak_qps_ = ctx.future_peak_qps;
  if (options_.oracle) {
    if (!future_peak_qps_) {
      return FailedPreconditionError(
          "composed: forecaster oracle needs the run's own future arrivals, which only sim "
          "knows");
    }
  } else {
    ASSIGN_OR_RETURN(forecaster_, MakeLoadForecaster(options_.forecaster));
  }
  // A live server solves off the engine thread; sim inline (a solve takes no virtual
  // time, and results must not depend on how long it takes).
  background_.reset();
  if (ctx.live && ctx.submit_offline) background_.emplace(ctx.submit_offline);
  stabilized_.assign(models, StabilizedForecast(options_.margin, options_.stabilization));
  // Each model's SLO: its task's (a composed suite carries the model's SLO there); the
  // run's SLO for a one-task suite or a task without one.
  std::vector<Duration> slo(models);
  for (size_t m = 0; m < models; ++m) {
    const Duration own = suite.tasks()[m].default_slo;
    slo[m] = (models == 1 && ctx.slo > Duration::zero()) || own <= Duration::zero() ? ctx.slo : own;
  }
  ComposedCapacityOptions co;
  co.slo_fraction = options_.slo_fraction;
  auto candidates = BuildComposedCandidates(suite, slo, co);
  if (!candidates.ok()) return candidates.status().WithPrefix("composed");
  ComposedProblem all;
  all.candidates = std::move(*candidates);
  all.lambda_rps.assign(models, 0);
  all.budget_usd_per_h = options_.budget_usd_per_h;
  all.headroom = options_.headroom;
  all.weights.beta = options_.beta;
  all.weights.gamma = options_.gamma;
  all.max_workers.assign(suite.hardware().size(), -1);
  for (const auto& [type, n] : options_.max_workers) {
    ASSIGN_OR_RETURN(const HardwareId h, FindType(suite, type, "max_workers"));
    all.max_workers[h] = static_cast<int>(*ParseInteger(n));
  }
  // The restrictions: named variants and types first, then the defaults.
  ComposedRestrictions r;
  if (options_.fixed_variants) r.fixed_variant.assign(models, kNoId);
  if (options_.fixed_hardware) r.fixed_hardware.assign(models, kNoId);
  for (const auto& [model, variant] : options_.fixed_variant) {
    ASSIGN_OR_RETURN(const TaskId m, FindModel(suite, model, "fixed_variants"));
    ASSIGN_OR_RETURN(const VariantId v, FindModelVariant(suite, m, variant));
    r.fixed_variant[m] = v;
  }
  for (const auto& [model, type] : options_.fixed_hardware_of) {
    ASSIGN_OR_RETURN(const TaskId m, FindModel(suite, model, "fixed_hardware"));
    ASSIGN_OR_RETURN(const HardwareId h, FindType(suite, type, "fixed_hardware"));
    r.fixed_hardware[m] = h;
  }
  for (TaskId m = 0; m < models; ++m) {
    VariantId v = options_.fixed_variants ? r.fixed_variant[m] : kNoId;
    if (v == kNoId) v = DefaultFixedVariant(all, m);
    if (options_.fixed_variants) r.fixed_variant[m] = v;
    if (options_.fixed_hardware && r.fixed_hardware[m] == kNoId) {
      r.fixed_hardware[m] = DefaultFixedHardware(all, m, v);
    }
  }
  problem_ = RestrictComposedProblem(all, r);
  std::vector<bool> before(models, false), after(models, false);
  for (const ComposedCandidate& c : all.candidates) before[c.model] = true;
  for (const ComposedCandidate& c : problem_.candidates) after[c.model] = true;
  for (TaskId m = 0; m < models; ++m) {
    const std::string& name = suite.tasks()[m].name;
    if (before[m] && !after[m]) {
      return InvalidArgumentError("composed: model '" + name +
                                  "': its fixed variant meets its SLO on no allowed hardware "
                                  "type (fixed_variants / fixed_hardware)");
    }
    if (!before[m]) {
      std::fprintf(stderr,
                   "sloserve: composed: model '%s' meets its SLO with no variant on any hardware "
                   "type at slo_fraction %g; it gets no workers\n",
                   name.c_str(), options_.slo_fraction);
    }
  }
  RETURN_IF_ERROR(ValidateComposedProblem(problem_).WithPrefix("composed"));
  unpinned_.assign(models, options_.pin_none);
  for (const std::string& model : options_.unpinned) {
    ASSIGN_OR_RETURN(const TaskId m, FindModel(suite, model, "pin"));
    unpinned_[m] = true;
  }
  shared_.assign(models, options_.share_all);
  for (const std::string& model : options_.shared) {
    ASSIGN_OR_RETURN(const TaskId m, FindModel(suite, model, "share"));
    shared_[m] = true;
  }
  // The pool the config started with is replaced, never kept for a target (it may hold
  // preloaded variants a shared worker would not).
  std::vector<WorkerId> initial;
  for (const WorkerView& w : ctx.workers) initial.push_back(w.id);
  rollout_.NeverKeep(std::move(initial));
  return OkStatus();
}

std::vector<double> ComposedPlanning::Forecast(const PlanningInput& input) {
  std::vector<double> lambda(stabilized_.size(), 0);
  for (size_t m = 0; m < lambda.size(); ++m) {
    std::span<const double> history;
    if (m < input.model_rate_history.size()) {
      history = input.model_rate_history[m];
    } else if (lambda.size() == 1) {
      history = input.rate_history;
    }
    const double forecast = options_.oracle ? future_peak_qps_(static_cast<TaskId>(m), input.now,
                                                               input.now + options_.interval)
                                            : forecaster_->Forecast(history);
    // At least 1 rps: every model keeps a worker for its next query.
    lambda[m] = std::max(1.0, stabilized_[m].Next(input.now, forecast));
  }
  return lambda;
}

ComposedProblem ComposedPlanning::ProblemAt(const std::vector<double>& lambda,
                                            const std::vector<WorkerView>& workers) const {
  ComposedProblem p = problem_;
  p.lambda_rps = lambda;
  std::map<std::pair<VariantId, HardwareId>, size_t> index;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    index[{p.candidates[i].variant, p.candidates[i].hardware}] = i;
  }
  for (const WorkerView& w : workers) {
    if (w.phase != WorkerPhase::kActive && w.phase != WorkerPhase::kStarting) continue;
    if (w.pinned != kNoId) {
      if (auto it = index.find({w.pinned, w.hardware}); it != index.end()) {
        ++p.candidates[it->second].current;
      }
      continue;
    }
    // An unpinned worker of an unpinned model runs every variant it holds (an upper
    // bound: keeping its count loads nothing); a shared one every variant of a shared
    // model it holds.
    const bool shared = w.model == kNoId;
    if (!shared && (w.model >= unpinned_.size() || !unpinned_[w.model])) continue;
    for (VariantId v = 0; v < w.residency.size(); ++v) {
      if (w.residency[v] != Residency::kReady && w.residency[v] != Residency::kLoading) continue;
      if (shared && !shared_[suite_->variants()[v].task]) continue;
      if (auto it = index.find({v, w.hardware}); it != index.end())
        ++p.candidates[it->second].current;
    }
  }
  return p;
}

std::vector<RolloutTarget> ComposedPlanning::Targets(const ComposedProblem& p,
                                                     const ComposedPlan& plan) const {
  const size_t models = p.lambda_rps.size();
  std::vector<int> workers_of(models, 0);
  std::vector<std::vector<VariantId>> planned(models);  // the variants each model runs
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const ComposedCandidate& c = p.candidates[i];
    const int k = plan.allocations[i].workers;
    if (k == 0) continue;
    workers_of[c.model] += k;
    std::vector<VariantId>& vs = planned[c.model];
    if (std::find(vs.begin(), vs.end(), c.variant) == vs.end()) vs.push_back(c.variant);
  }
  // A worker's quota: its share of its model's served load (equal shares if none).
  auto share = [&](TaskId m, double quota_rps, int k) {
    const double served = plan.served_rps[m];
    return served > 0 ? quota_rps / (served * k) : 1.0 / workers_of[m];
  };
  std::vector<RolloutTarget> out;
  for (TaskId m = 0; m < models; ++m) {
    if (shared_[m]) {
      // Shared: plain machines of the planned types, serving any model they can; what
      // they load is the placement's decision, per query.
      for (size_t i = 0; i < p.candidates.size(); ++i) {
        if (p.candidates[i].model != m) continue;
        RolloutTarget t;
        t.hardware = p.candidates[i].hardware;
        t.model = kAnyModel;
        for (int k = 0; k < plan.allocations[i].workers; ++k) out.push_back(t);
      }
      continue;
    }
    if (!unpinned_[m]) {
      for (size_t i = 0; i < p.candidates.size(); ++i) {
        const ComposedCandidate& c = p.candidates[i];
        const ComposedAllocation& a = plan.allocations[i];
        if (c.model != m || a.workers == 0) continue;
        RolloutTarget t;
        t.hardware = c.hardware;
        t.pinned = c.variant;
        t.model = m;
        t.quota = share(m, a.quota_rps, a.workers);
        for (int k = 0; k < a.workers; ++k) out.push_back(t);
      }
      continue;
    }
    // Unpinned: the model's workers per hardware type, each loaded with the planned
    // variants that meet the SLO there, as many as its machine's memory holds (those
    // with the most quota there first).
    std::map<HardwareId, std::pair<int, double>> per_type;  // type -> (workers, quota rps)
    for (size_t i = 0; i < p.candidates.size(); ++i) {
      const ComposedCandidate& c = p.candidates[i];
      if (c.model != m || plan.allocations[i].workers == 0) continue;
      per_type[c.hardware].first += plan.allocations[i].workers;
      per_type[c.hardware].second += plan.allocations[i].quota_rps;
    }
    for (const auto& [h, wq] : per_type) {
      RolloutTarget t;
      t.hardware = h;
      t.model = m;
      t.quota = share(m, wq.second, wq.first);
      std::vector<size_t> here;  // candidates of m on h with a planned variant
      for (size_t i = 0; i < p.candidates.size(); ++i) {
        const ComposedCandidate& c = p.candidates[i];
        const std::vector<VariantId>& vs = planned[m];
        if (c.model == m && c.hardware == h &&
            std::find(vs.begin(), vs.end(), c.variant) != vs.end())
          here.push_back(i);
      }
      std::stable_sort(here.begin(), here.end(), [&](size_t a, size_t b) {
        return plan.allocations[a].quota_rps > plan.allocations[b].quota_rps;
      });
      std::vector<VariantId> wanted;
      for (size_t i : here) wanted.push_back(p.candidates[i].variant);
      const size_t planned_count = wanted.size();
      if (!options_.load_planned_only) {
        // The plan sizes the workers for its variants; the selection (RAMSIS, which chooses
        // among what its workers hold) may run any variant of the model profiled here when
        // the queue allows, the most accurate first after the planned ones.
        std::vector<VariantId> rest;
        for (VariantId v : suite_->VariantsOfTask(m)) {
          if (suite_->MaxBatch(h, v) > 0 &&
              std::find(wanted.begin(), wanted.end(), v) == wanted.end())
            rest.push_back(v);
        }
        std::stable_sort(rest.begin(), rest.end(), [&](VariantId a, VariantId b) {
          return suite_->variants()[a].accuracy > suite_->variants()[b].accuracy;
        });
        wanted.insert(wanted.end(), rest.begin(), rest.end());
      }
      // The planned variants are loaded before the worker serves; the others once it
      // serves, while it is idle (a scale-up does not wait for them).
      const double machine_mb = suite_->hardware()[h].memory_gb * 1024.0;
      double used_mb = 0;
      for (size_t i = 0; i < wanted.size(); ++i) {
        const double mb = suite_->variants()[wanted[i]].memory_mb;
        if (machine_mb > 0 && used_mb + mb > machine_mb) continue;
        used_mb += mb;
        (i < planned_count ? t.load : t.prefetch).push_back(wanted[i]);
      }
      for (int k = 0; k < wq.first; ++k) out.push_back(t);
    }
  }
  return out;
}

void ComposedPlanning::Plan(const PlanningInput& input, DeploymentPlan* out) {
  const std::vector<WorkerView>& workers = *input.workers;
  if (rollout_.in_progress()) {
    rollout_.Continue(input.now, workers, out);  // create before delete
    return;
  }
  if (background_ && background_->busy()) {
    std::optional<StatusOr<ComposedPlan>> plan = background_->TakeResult();
    if (!plan) return;  // the solver still runs off the engine thread
    if (!plan->ok()) {
      std::fprintf(stderr, "sloserve: composed: solve failed: %s\n",
                   plan->status().ToString().c_str());
      return;
    }
    RollOut(input.now, std::move(background_lambda_), background_problem_, std::move(**plan),
            workers, out);
    return;
  }
  if (static_done_ || input.now < next_solve_) return;
  next_solve_ = input.now + options_.interval;
  std::vector<double> lambda = Forecast(input);
  ComposedProblem problem = ProblemAt(lambda, workers);
  SolveAndRollOut(input.now, std::move(lambda), std::move(problem), workers, out);
}

void ComposedPlanning::SolveAndRollOut(TimePoint now, std::vector<double> lambda,
                                       ComposedProblem problem,
                                       const std::vector<WorkerView>& workers,
                                       DeploymentPlan* out) {
  // Reads only its own copies: a live job may outlive the policy.
  auto solve = [problem, fixed = options_.static_sizing, limit = options_.time_limit_ms] {
    return fixed ? ComposedStaticPlan(problem) : SolveComposedMilp(problem, {limit});
  };
  if (background_) {
    background_lambda_ = std::move(lambda);
    background_problem_ = std::move(problem);
    background_->Submit("composed solve", std::move(solve));
    return;
  }
  StatusOr<ComposedPlan> plan = solve();
  if (!plan.ok()) {  // keep the deployment; the next interval tries again
    std::fprintf(stderr, "sloserve: composed: solve failed: %s\n",
                 plan.status().ToString().c_str());
    return;
  }
  RollOut(now, std::move(lambda), problem, std::move(*plan), workers, out);
}

void ComposedPlanning::RollOut(TimePoint now, std::vector<double> lambda,
                               const ComposedProblem& problem, ComposedPlan plan,
                               const std::vector<WorkerView>& workers, DeploymentPlan* out) {
  static_done_ = options_.static_sizing;
  rollout_.Start(now, Targets(problem, plan), workers, out);
  solves_.push_back({now, std::move(lambda), problem.candidates, std::move(plan)});
}

}  // namespace sloserve
