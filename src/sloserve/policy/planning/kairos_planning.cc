#include "sloserve/policy/planning/kairos_planning.h"

#include <algorithm>

#include "sloserve/policy/planning/kairos_config_pick.h"
#include "sloserve/policy/planning/kairos_upper_bound.h"

namespace sloserve {
namespace kairos_planning_options {
const KeyDecl kBudget{.name = "budget_per_hour",
                      .type = KeyType::kNumber,
                      .unit = "$/h",
                      .min = 0,
                      .min_exclusive = true,
                      .help = "what the active instance mix may cost; required"};
const KeyDecl kMaxInstances{.name = "max_instances",
                            .type = KeyType::kString,
                            .help =
                                "most instances per type, \"type:N,...\" (unset: as many "
                                "as the budget buys)"};
const KeyDecl kMinSizes{.name = "min_sizes",
                        .type = KeyType::kInteger,
                        .default_value = "200",
                        .unit = "queries",
                        .min = 1,
                        .max = static_cast<double>(PlanningInput::kRecentSizes),
                        .help = "arrivals seen before the first pick"};
const KeyDecl kMinGain{.name = "min_gain",
                       .type = KeyType::kNumber,
                       .default_value = "0.05",
                       .min = 0,
                       .max = 10,
                       .help =
                           "relative bound gain of the pick over the current mix before "
                           "workers move"};
}  // namespace kairos_planning_options

StatusOr<std::unique_ptr<PlanningPolicy>> KairosPlanning::Create(const PolicyParams& p) {
  namespace k = kairos_planning_options;
  Options o;
  ASSIGN_OR_RETURN(o.max_instances, p.GetString(k::kMaxInstances));
  ASSIGN_OR_RETURN(o.min_sizes, p.GetInt(k::kMinSizes));
  ASSIGN_OR_RETURN(o.min_gain, p.GetDouble(k::kMinGain));
  // The required option last: the registry learns the options by running this on none.
  ASSIGN_OR_RETURN(o.budget_per_hour, p.GetDouble(k::kBudget));
  return std::unique_ptr<PlanningPolicy>(new KairosPlanning(std::move(o)));
}

Status KairosPlanning::Init(const PolicyContext& ctx) {
  suite_ = std::make_shared<const ProfileSuite>(*ctx.suite);
  ASSIGN_OR_RETURN(space_,
                   MakeConfigSpace(*suite_, options_.budget_per_hour, options_.max_instances));
  auto predictor = std::make_shared<LatencyPredictor>();
  RETURN_IF_ERROR(predictor->Init(*suite_, ctx.seed));
  predictor_ = std::move(predictor);
  // As `fixed` picks by default and every Kairos experiment serves: the most accurate.
  task_ = ctx.task;
  variant_ = suite_->MostAccurateVariant(ctx.task);
  if (variant_ == kNoId) {
    return InvalidArgumentError("planning policy 'kairos_mix': task '" +
                                suite_->tasks()[ctx.task].name + "' has no variant");
  }
  qos_ = ctx.slo.count() > 0 ? ctx.slo : suite_->tasks()[ctx.task].default_slo;
  if (ctx.live && ctx.submit_offline) background_.emplace(ctx.submit_offline);
  return OkStatus();
}

InstanceCounts KairosPlanning::CurrentMix(const std::vector<WorkerView>& workers) const {
  InstanceCounts mix(suite_->hardware().size(), 0);
  for (const WorkerView& w : workers) {
    if (!Manages(w)) continue;
    if (w.phase == WorkerPhase::kActive || w.phase == WorkerPhase::kStarting) ++mix[w.hardware];
  }
  return mix;
}

namespace {

// Kairos' pick for `sizes` (as `sloserve plan kairos`), and the bounds of it and of
// `current`. Reads only its arguments: it may run off the engine thread.
StatusOr<KairosPlanning::MixPick> PickMix(const ProfileSuite& suite,
                                          const LatencyPredictor& predictor, ConfigSpace space,
                                          VariantId variant, Duration qos, std::vector<int> sizes,
                                          InstanceCounts current) {
  ASSIGN_OR_RETURN(KairosUpperBound bound,
                   KairosUpperBound::Create(predictor, suite, variant, qos, std::move(sizes)));
  space.min_count[bound.base()] = 1;  // only the base type serves every size (as offline)
  if (space.max_count[bound.base()] < 1)
    return FailedPreconditionError("the budget leaves no room for the base type");
  const std::vector<InstanceCounts> configs = EnumerateConfigs(space);
  if (configs.empty()) return FailedPreconditionError("no mix within the budget");
  std::vector<double> bounds(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) bounds[i] = bound.Bound(configs[i]);
  const std::vector<RankedConfig> ranked = RankByBound(space, configs, bounds);
  KairosPlanning::MixPick r;
  r.pick = ranked[SimilarityPick(ranked, bound.base())].counts;
  r.pick_bound = bound.Bound(r.pick);
  r.current_bound = bound.Bound(current);
  r.current = std::move(current);
  return r;
}

}  // namespace

void KairosPlanning::Plan(const PlanningInput& input, DeploymentPlan* out) {
  if (background_ && background_->busy()) {
    std::optional<StatusOr<MixPick>> r = background_->TakeResult();
    if (r && r->ok()) Apply(**r, *input.workers, out);
    return;  // (else the pick still runs off the engine thread)
  }
  if (input.recent_sizes.size() < static_cast<size_t>(options_.min_sizes)) return;
  std::vector<int> sizes(input.recent_sizes.begin(), input.recent_sizes.end());
  InstanceCounts current = CurrentMix(*input.workers);
  if (background_) {
    background_->Submit(
        "Kairos mix pick",
        [suite = suite_, predictor = predictor_, space = space_, variant = variant_, qos = qos_,
         sizes = std::move(sizes), current = std::move(current)]() mutable {
          return PickMix(*suite, *predictor, std::move(space), variant, qos, std::move(sizes),
                         std::move(current));
        });
    return;
  }
  // When no type meets the QoS for any recent size, no mix is better than another.
  StatusOr<MixPick> r =
      PickMix(*suite_, *predictor_, space_, variant_, qos_, std::move(sizes), std::move(current));
  if (r.ok()) Apply(*r, *input.workers, out);
}

void KairosPlanning::Apply(const MixPick& r, const std::vector<WorkerView>& workers,
                           DeploymentPlan* out) {
  last_pick_ = r.pick;
  const InstanceCounts now = CurrentMix(workers);
  if (r.pick == now || r.current != now) return;  // nothing to do, or asked of another mix
  if (r.current_bound > 0 && r.pick_bound < r.current_bound * (1 + options_.min_gain)) return;
  MakeActive(r.pick, workers, out);
}

void KairosPlanning::MakeActive(const InstanceCounts& target,
                                const std::vector<WorkerView>& workers, DeploymentPlan* out) const {
  out->change = true;
  // Per type, the workers serving now first (lowest ids first among equals), so a change
  // keeps what is warm and deactivates the newest surplus last in.
  std::vector<const WorkerView*> order;
  for (const WorkerView& w : workers)
    if (w.phase != WorkerPhase::kRetired && Manages(w)) order.push_back(&w);
  std::stable_sort(order.begin(), order.end(), [](const WorkerView* a, const WorkerView* b) {
    const bool a_on = a->phase == WorkerPhase::kActive || a->phase == WorkerPhase::kStarting;
    const bool b_on = b->phase == WorkerPhase::kActive || b->phase == WorkerPhase::kStarting;
    return a_on > b_on;
  });
  std::vector<int> given(target.size(), 0);
  for (const WorkerView* w : order) {
    WorkerPlan p;
    p.worker = w->id;
    p.active = w->hardware < target.size() && given[w->hardware] < target[w->hardware];
    if (p.active) ++given[w->hardware];
    // A plan entry sets the worker's pin and quota too: restate the current ones.
    p.pinned = w->pinned;
    p.quota = w->quota;
    out->workers.push_back(p);
  }
  for (HardwareId h = 0; h < target.size(); ++h) {
    for (int n = given[h]; n < target[h]; ++n) {
      WorkerPlan p;
      p.hardware = h;
      p.load = {variant_};  // serves once the variant is loaded (a cold start)
      out->workers.push_back(p);
    }
  }
}

}  // namespace sloserve
