#include "sloserve/policy/selection/ramsis.h"

#include "sloserve/core/mutex.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/selection/variant_lookup.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace {

std::string DefaultCacheDir() {
  if (const char* dir = std::getenv("SLOSERVE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/sloserve/mdp";
  }
  return "/tmp/sloserve-cache/mdp";
}

// Policy sets already loaded or generated in this process, by set key: the runs of a
// sweep share one generation instead of racing to produce the same cache file.
struct SharedPolicySets {
  Mutex generate_mu;  // held while generating: others wait for it
  Mutex mu ACQUIRED_AFTER(generate_mu);
  std::map<std::string, std::shared_ptr<const std::vector<mdp::Policy>>> sets GUARDED_BY(mu);
};
SharedPolicySets& Shared() {
  static SharedPolicySets* shared = new SharedPolicySets;  // never destroyed: runs may
  return *shared;                                          // outlive static teardown
}

// The set if this process or a cache has it, without generating (nullopt: nobody has it).
StatusOr<std::optional<std::vector<mdp::Policy>>> CachedPolicySet(const ProfileSuite& suite,
                                                                  const mdp::MdpOptions& m,
                                                                  const mdp::PolicySetOptions& set,
                                                                  const std::string& cache_dir) {
  SharedPolicySets& shared = Shared();
  ASSIGN_OR_RETURN(std::string key, mdp::PolicySetKey(suite, m, set));
  {
    MutexLock lock(shared.mu);
    auto it = shared.sets.find(key);
    if (it != shared.sets.end()) return std::optional(*it->second);
  }
  auto cached = mdp::LoadCachedPolicySet(suite, m, set, cache_dir);
  if (!cached.ok()) return std::optional<std::vector<mdp::Policy>>();
  MutexLock lock(shared.mu);
  shared.sets[key] = std::make_shared<const std::vector<mdp::Policy>>(*cached);
  return std::optional(std::move(cached).value());
}

StatusOr<std::vector<mdp::Policy>> SharedPolicySet(const ProfileSuite& suite,
                                                   const mdp::MdpOptions& m,
                                                   const mdp::PolicySetOptions& set,
                                                   const std::string& cache_dir,
                                                   const mdp::PolicySetProgress& progress) {
  SharedPolicySets& shared = Shared();
  ASSIGN_OR_RETURN(std::string key, mdp::PolicySetKey(suite, m, set));
  MutexLock generating(shared.generate_mu);
  {
    MutexLock lock(shared.mu);
    auto it = shared.sets.find(key);
    if (it != shared.sets.end()) return *it->second;
  }
  ASSIGN_OR_RETURN(std::vector<mdp::Policy> policies,
                   mdp::LoadOrGeneratePolicySet(suite, m, set, cache_dir, progress));
  MutexLock lock(shared.mu);
  shared.sets[key] = std::make_shared<const std::vector<mdp::Policy>>(policies);
  return policies;
}

}  // namespace

namespace ramsis_options {
const KeyDecl kMinQps{
    .name = "min_qps",
    .type = KeyType::kNumber,
    .default_value = "0",
    .unit = "qps",
    .min = 0,
    .help = "lowest load of the policy set (0 with max_qps 0: from the deployment)"};
const KeyDecl kMaxQps{.name = "max_qps",
                      .type = KeyType::kNumber,
                      .default_value = "0",
                      .unit = "qps",
                      .min = 0,
                      .help = "highest load of the policy set (0: from the deployment)"};
const KeyDecl kAccuracyStep{.name = "accuracy_step",
                            .type = KeyType::kNumber,
                            .default_value = "0.01",
                            .min = 0,
                            .min_exclusive = true,
                            .help = "accuracy resolution of the policy set over the load range"};
const KeyDecl kDiscretization{.name = "discretization",
                              .type = KeyType::kChoice,
                              .default_value = "fld",
                              .choices = {"fld", "md"},
                              .help =
                                  "MDP state discretization: fixed length (fld) or "
                                  "model-based (md)"};
const KeyDecl kD{.name = "d",
                 .type = KeyType::kInteger,
                 .default_value = "100",
                 .min = 1,
                 .max = 2'147'483'647,
                 .help = "fld: discretization steps of the slack"};
const KeyDecl kMdpBatching{.name = "mdp_batching",
                           .type = KeyType::kChoice,
                           .default_value = "maximal",
                           .choices = {"maximal", "variable"},
                           .help = "batch sizes the MDP considers"};
const KeyDecl kMaxQueue{.name = "max_queue",
                        .type = KeyType::kInteger,
                        .default_value = "32",
                        .unit = "queries",
                        .min = 0,
                        .max = 2'147'483'647,
                        .help = "longest queue the MDP models"};
const KeyDecl kArrival{.name = "arrival",
                       .type = KeyType::kChoice,
                       .default_value = "poisson",
                       .choices = {"poisson", "gamma"},
                       .help = "arrival process the MDP assumes"};
const KeyDecl kCv{.name = "cv",
                  .type = KeyType::kNumber,
                  .default_value = "1",
                  .min = 0,
                  .min_exclusive = true,
                  .help = "gamma arrivals: coefficient of variation of inter-arrival times"};
const KeyDecl kCriterion{.name = "criterion",
                         .type = KeyType::kChoice,
                         .default_value = "accuracy-per-query",
                         .choices = {"accuracy-per-query", "undiscounted-sweeps"},
                         .help = "MDP solver objective"};
const KeyDecl kCacheDir{.name = "cache_dir",
                        .type = KeyType::kPath,
                        .help =
                            "cache of solved MDP policies; default: $SLOSERVE_CACHE_DIR, else "
                            "~/.cache/sloserve/mdp"};
const KeyDecl kLoadQps{
    .name = "load_qps",
    .type = KeyType::kNumber,
    .default_value = "0",
    .unit = "qps",
    .min = 0,
    .help = "plan for this fixed load instead of the measured one (0 = measure)"};
const KeyDecl kThreads{.name = "threads",
                       .type = KeyType::kInteger,
                       .default_value = "2",
                       .min = 1,
                       .max = 4096,
                       .help = "threads solving the MDP policy set"};
}  // namespace ramsis_options

StatusOr<std::unique_ptr<SelectionPolicy>> RamsisSelection::Create(const PolicyParams& p) {
  Options o;
  namespace opt = ramsis_options;
  ASSIGN_OR_RETURN(o.set.min_qps, p.GetDouble(opt::kMinQps));
  ASSIGN_OR_RETURN(o.set.max_qps, p.GetDouble(opt::kMaxQps));
  ASSIGN_OR_RETURN(o.set.accuracy_step, p.GetDouble(opt::kAccuracyStep));
  ASSIGN_OR_RETURN(std::string disc, p.GetString(opt::kDiscretization));
  ASSIGN_OR_RETURN(int64_t d, p.GetInt(opt::kD));
  ASSIGN_OR_RETURN(o.mdp.discretization, mdp::ParseDiscretization(disc, static_cast<int>(d)));
  ASSIGN_OR_RETURN(std::string batching, p.GetString(opt::kMdpBatching));
  ASSIGN_OR_RETURN(o.mdp.batching, mdp::ParseBatching(batching));
  ASSIGN_OR_RETURN(int64_t max_queue, p.GetInt(opt::kMaxQueue));
  o.mdp.max_queue = static_cast<int>(max_queue);
  ASSIGN_OR_RETURN(o.mdp.latency_quantile, p.GetDouble(kQuantileOption));
  ASSIGN_OR_RETURN(std::string arrival, p.GetString(opt::kArrival));
  ASSIGN_OR_RETURN(double cv, p.GetDouble(opt::kCv));
  ASSIGN_OR_RETURN(o.mdp.arrival, mdp::ParseArrival(arrival, cv));
  ASSIGN_OR_RETURN(std::string criterion, p.GetString(opt::kCriterion));
  ASSIGN_OR_RETURN(o.mdp.solver.criterion, mdp::ParseCriterion(criterion));
  ASSIGN_OR_RETURN(std::string variants, p.GetString(kVariantsOption));
  std::stringstream ss(variants);
  for (std::string v; std::getline(ss, v, ',');) {
    if (!v.empty()) o.mdp.variants.push_back(v);
  }
  ASSIGN_OR_RETURN(double window_ms, p.GetDouble(kWindowMsOption));
  o.window = MillisF(window_ms);
  ASSIGN_OR_RETURN(o.cache_dir, p.GetString(opt::kCacheDir));
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  ASSIGN_OR_RETURN(o.slo_workers, p.GetString(kSloWorkersOption));
  ASSIGN_OR_RETURN(o.fixed_load_qps, p.GetDouble(opt::kLoadQps));
  ASSIGN_OR_RETURN(int64_t threads, p.GetInt(opt::kThreads));
  o.set.threads = static_cast<int>(threads);
  return std::unique_ptr<SelectionPolicy>(new RamsisSelection(std::move(o)));
}

Status RamsisSelection::Init(const PolicyContext& ctx) {
  const ProfileSuite& suite = *ctx.suite;
  if (ctx.workers.empty()) return InvalidArgumentError("ramsis: no workers");
  suite_ = ctx.suite;
  submit_offline_ = ctx.submit_offline;
  degraded_ = ctx.degraded;
  failed_.clear();
  background_.clear();
  task_ = ctx.task;
  eligibility_.Init(ctx.suite);
  // The workers that serve this model (all of them on a single-model pool); none: all.
  size_t serving = 0;
  HardwareId hw = ctx.workers.front().hardware;
  for (const WorkerView& w : ctx.workers) {
    if (!eligibility_.Serves(w, ctx.task)) continue;
    if (serving++ == 0) hw = w.hardware;
  }
  if (serving == 0) serving = ctx.workers.size();
  load_scale_ = 1;
  mdp::MdpOptions m = options_.mdp;
  m.task = suite.tasks()[ctx.task].name;
  m.hardware = suite.hardware()[hw].name;
  hw_ = hw;
  mdp_variants_.clear();
  for (const std::string& name : m.variants) {  // the MDP's candidates: the task's variants
    ASSIGN_OR_RETURN(const VariantId v, FindOptionVariant(suite, ctx.task, "ramsis", "variants",
                                                          name, /*same_task=*/true));
    mdp_variants_.push_back(v);
  }
  if (mdp_variants_.empty()) mdp_variants_ = suite.VariantsOfTask(ctx.task);
  std::sort(mdp_variants_.begin(), mdp_variants_.end());
  restrict_.clear();
  installed_.clear();
  variant_sets_.clear();
  extend_below_.clear();
  generating_.clear();
  const Duration slo = ctx.slo.count() > 0 ? ctx.slo : suite.tasks()[ctx.task].default_slo;
  if (options_.slo_workers.empty()) {
    slo_classes_ = {{slo, 0, serving}};
  } else {
    serving = ctx.workers.size();
    ASSIGN_OR_RETURN(slo_classes_, ParseSloClasses(options_.slo_workers, serving));
  }
  mdp_workers_ = static_cast<int>(serving);
  m.workers = static_cast<int>(serving);

  // The fastest variant (at batch 1) and the deployment's peak throughput.
  const Speed speed = SpeedOf(suite.VariantsOfTask(ctx.task), m);
  fastest_ = speed.fastest;
  const double peak_qps = speed.peak_per_worker * static_cast<double>(serving);
  if (fastest_.variant == kNoId) return FailedPreconditionError("ramsis: no profiled variant");
  restrict_fastest_ = fastest_;
  worker_class_.assign(ctx.workers.size(), 0);
  // A fresh set: publish steps of jobs submitted before this Init find theirs expired.
  classes_ = std::make_shared<std::vector<ClassState>>();
  std::vector<ClassState>& classes = *classes_;
  for (size_t c = 0; c < slo_classes_.size(); ++c) {
    const SloClass& cls = slo_classes_[c];
    for (size_t w = cls.first_worker; w < cls.first_worker + cls.workers; ++w) worker_class_[w] = c;
    m.slo = cls.slo;
    m.workers = static_cast<int>(cls.workers);
    if (c == 0) base_mdp_ = m;
    mdp::PolicySetOptions set = options_.set;
    const double class_peak = peak_qps * static_cast<double>(cls.workers) / serving;
    if (set.max_qps <= 0) set.max_qps = class_peak;
    const bool defaulted_min = set.min_qps <= 0;
    if (defaulted_min) set.min_qps = std::max(1.0, set.max_qps * 0.01);
    if (set.min_qps >= set.max_qps)
      return InvalidArgumentError("ramsis: min_qps must be below max_qps");
    ClassState state{cls, LoadMonitor(LoadMonitor::Options{options_.window, kTimeZero}), {}, m};
    if (defaulted_min) state.extend_below_qps = set.min_qps;
    if (c == 0) extend_below_[{}] = state.extend_below_qps;
    if (options_.fixed_load_qps > 0) {
      m.load_qps = options_.fixed_load_qps;
      ASSIGN_OR_RETURN(mdp::Policy only, mdp::GeneratePolicy(suite, m));
      state.policies.push_back(std::move(only));
      classes.push_back(std::move(state));
      continue;
    }
    mdp::PolicySetProgress progress;
    if (ctx.progress) {
      char what[256];
      std::snprintf(what, sizeof what,
                    "RAMSIS policy set (SLO %.0f ms, %d workers, %.0f-%.0f qps; cached in %s)",
                    ToMillis(m.slo), m.workers, set.min_qps, set.max_qps,
                    options_.cache_dir.c_str());
      progress = [report = ctx.progress, text = std::string(what)](
                     int done, int total, const mdp::Policy&) { report(text, done, total); };
    }
    if (ctx.live && ctx.submit_offline) {
      // A server answers with the fastest variant while a missing set is generated.
      ASSIGN_OR_RETURN(auto cached, CachedPolicySet(suite, m, set, options_.cache_dir));
      if (!cached) {
        set.cancel = ctx.offline_cancel;
        GenerateInBackground(classes.size(), m, set, progress);
        state.in_flight = true;  // also keeps Extend from generating beside it
        classes.push_back(std::move(state));
        continue;
      }
      state.policies = std::move(*cached);
    } else {
      ASSIGN_OR_RETURN(state.policies,
                       SharedPolicySet(suite, m, set, options_.cache_dir, progress));
    }
    if (state.policies.empty()) return InternalError("ramsis: empty policy set");
    classes.push_back(std::move(state));
  }
  for (size_t c = 0; c < classes.size(); ++c) {
    if (!classes[c].in_flight) continue;
    submit_offline_(std::move(background_[c]));
  }
  background_.clear();
  if (degraded_) degraded_(DegradedNote());
  return OkStatus();
}

std::string RamsisSelection::DegradedNote() const {
  int generating = 0;
  for (const ClassState& cls : *classes_) generating += cls.policies.empty() ? 1 : 0;
  if (generating == 0 && failed_.empty()) return "";
  std::string note =
      "serving the fastest variant (" + suite_->variants()[fastest_.variant].name + ")";
  if (!failed_.empty()) return note + ": RAMSIS policy set generation failed: " + failed_;
  return note + " while " + std::to_string(generating) + " of " + std::to_string(classes_->size()) +
         " RAMSIS policy set(s) are generated";
}

void RamsisSelection::GenerateInBackground(size_t c, const mdp::MdpOptions& m,
                                           const mdp::PolicySetOptions& set,
                                           const mdp::PolicySetProgress& progress) {
  background_.resize(c + 1);
  OfflineJob& job = background_[c];
  job.what = "RAMSIS policy set for SLO class " + std::to_string(c);
  // Off the engine thread: reads only the suite (immutable) and its own copies.
  job.work = [this, suite = suite_, m, set, cache_dir = options_.cache_dir, progress,
              classes = std::weak_ptr<std::vector<ClassState>>(classes_),
              c]() -> std::function<void()> {
    auto generated = std::make_shared<StatusOr<std::vector<mdp::Policy>>>(
        SharedPolicySet(*suite, m, set, cache_dir, progress));
    // On the engine thread, as an event: the set replaces the fallback.
    return [this, generated, classes, c] {
      std::shared_ptr<std::vector<ClassState>> live = classes.lock();
      if (!live || c >= live->size()) return;  // the policy is gone or re-initialised
      ClassState& cls = (*live)[c];
      cls.in_flight = false;
      if (generated->ok() && !(*generated)->empty()) {
        if (c == 0 && !restrict_.empty()) {
          // Meanwhile a plan restricted the variants: kept for when it no longer does.
          variant_sets_[{}] = std::move(*generated).value();
          if (cls.policies.empty()) cls.policies = variant_sets_[{}];
          if (degraded_) degraded_(DegradedNote());
          return;
        }
        cls.policies = std::move(*generated).value();
      } else {
        failed_ = generated->ok() ? "empty policy set" : generated->status().message();
      }
      if (degraded_) degraded_(DegradedNote());
    };
  };
}

void RamsisSelection::Extend(size_t c, double qps) {
  ClassState& cls = (*classes_)[c];
  if (!submit_offline_ || cls.in_flight || cls.policies.empty()) return;
  const bool above = cls.policies.back().load_qps() < qps;
  // Below the default range: only from 1 qps (the range's own floor), and only when the
  // covering policy is too pessimistic by more than 2x, so a ramp adds log2-many.
  const bool below = !above && qps >= 1 && qps < cls.extend_below_qps &&
                     mdp::SelectPolicy(cls.policies, qps)->load_qps() > 2 * qps;
  if (!above && !below) return;
  cls.in_flight = true;
  // 10% headroom so the new policy covers the load for a while.
  mdp::MdpOptions m = cls.mdp;
  m.load_qps = qps * 1.1;
  char what[128];
  std::snprintf(what, sizeof what, "RAMSIS policy for %.1f qps (SLO %.0f ms)", m.load_qps,
                ToMillis(m.slo));
  OfflineJob job;
  job.what = what;
  // Off the engine thread: reads only the suite (immutable) and its own copy of the MDP.
  job.work = [suite = suite_, m, classes = std::weak_ptr<std::vector<ClassState>>(classes_), c,
              epoch = cls.epoch]() -> std::function<void()> {
    auto generated = std::make_shared<StatusOr<mdp::Policy>>(mdp::GeneratePolicy(*suite, m));
    // On the engine thread, as an event: publish into the set this job was asked for.
    return [generated, classes, c, epoch] {
      std::shared_ptr<std::vector<ClassState>> live = classes.lock();
      if (!live || c >= live->size()) return;  // the policy is gone or re-initialised
      ClassState& cls = (*live)[c];
      cls.in_flight = false;  // a failed generation is retried at a later decision
      if (!generated->ok() || cls.epoch != epoch) return;  // or: for a set since swapped
      mdp::Policy p = std::move(*generated).value();
      auto at = std::upper_bound(cls.policies.begin(), cls.policies.end(), p.load_qps(),
                                 [](double l, const mdp::Policy& x) { return l < x.load_qps(); });
      cls.policies.insert(at, std::move(p));
    };
  };
  submit_offline_(std::move(job));
}

void RamsisSelection::OnWorkersChanged(const std::vector<WorkerView>& workers) {
  if (slo_classes_.size() != 1 || mdp_workers_ <= 0) return;
  int active = 0;
  for (const WorkerView& w : workers) active += eligibility_.Eligible(w, task_) ? 1 : 0;
  // No active worker serving the model: nothing is chosen for it until one is.
  load_scale_ = active > 0 ? static_cast<double>(mdp_workers_) / active : 1.0;
  if (options_.fixed_load_qps <= 0) UseVariantSet(LoadedSet(workers));
}

std::vector<VariantId> RamsisSelection::LoadedSet(const std::vector<WorkerView>& workers) const {
  std::vector<VariantId> held;
  for (const WorkerView& w : workers) {
    if (w.model != task_ || w.pinned != kNoId || !eligibility_.Eligible(w, task_)) continue;
    for (VariantId v : mdp_variants_) {
      if (v < w.residency.size() &&
          (w.residency[v] == Residency::kReady || w.residency[v] == Residency::kLoading))
        held.push_back(v);
    }
    // Prefetches to come count as held: one policy set for what the worker will hold,
    // not one per prefetch landing (until one lands, a decision naming it falls back).
    for (VariantId v : w.prefetch) {
      if (std::find(mdp_variants_.begin(), mdp_variants_.end(), v) != mdp_variants_.end())
        held.push_back(v);
    }
  }
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  if (held.size() == mdp_variants_.size()) held.clear();  // all of them: no restriction
  return held;
}

RamsisSelection::Speed RamsisSelection::SpeedOf(const std::vector<VariantId>& variants,
                                                const mdp::MdpOptions& m) const {
  Speed speed;
  Duration best = Duration::max();
  for (VariantId v : variants) {
    const LatencyDistribution* one = suite_->Latency(hw_, v, 1);
    if (!one) continue;
    const Duration l1 = one->Quantile(m.latency_quantile);
    const int b = std::min(suite_->MaxBatch(hw_, v), m.max_queue);
    const LatencyDistribution* big = suite_->Latency(hw_, v, b);
    const double tput = big ? b / ToSeconds(big->Quantile(m.latency_quantile)) : 0;
    speed.peak_per_worker = std::max(speed.peak_per_worker, tput);
    if (l1 < best) {
      best = l1;
      speed.fastest = {v, b};
    }
  }
  return speed;
}

void RamsisSelection::Install(ClassState& cls, const std::vector<VariantId>& key,
                              const mdp::MdpOptions& m) {
  cls.policies = variant_sets_[key];
  cls.mdp = m;
  auto below = extend_below_.find(key);
  cls.extend_below_qps = below == extend_below_.end() ? 0 : below->second;
  installed_ = key;
  ++cls.epoch;
}

void RamsisSelection::UseVariantSet(std::vector<VariantId> variants) {
  if (variants == restrict_ || classes_->empty()) return;
  ClassState& cls = (*classes_)[0];
  // What the installed set grew to (Extend) is kept for when it is used again.
  if (!cls.policies.empty()) variant_sets_[installed_] = cls.policies;
  restrict_ = std::move(variants);
  mdp::MdpOptions m = base_mdp_;
  const Speed speed = SpeedOf(restrict_, m);
  restrict_fastest_ = speed.fastest.variant == kNoId ? fastest_ : speed.fastest;
  if (!restrict_.empty()) {
    m.variants.clear();
    for (VariantId v : restrict_) m.variants.push_back(suite_->variants()[v].name);
  }
  if (variant_sets_.count(restrict_)) {
    Install(cls, restrict_, m);
    return;
  }
  // Until its own set is published, the current one's decisions are restricted (Choose).
  if (restrict_.empty() || generating_.count(restrict_)) return;
  generating_.insert(restrict_);
  // The range as Init's: by default up to the peak of these variants on the MDP's
  // workers, from 1% of it, with policies added on demand below that.
  mdp::PolicySetOptions set = options_.set;
  if (set.max_qps <= 0) set.max_qps = speed.peak_per_worker * m.workers;
  if (set.min_qps <= 0) {
    set.min_qps = std::max(1.0, set.max_qps * 0.01);
    extend_below_[restrict_] = set.min_qps;
  }
  OfflineJob job;
  job.what = "RAMSIS policy set over " + std::to_string(restrict_.size()) + " loaded variants";
  // Off the engine thread: reads only the suite (immutable) and its own copies.
  job.work = [this, suite = suite_, m, set, cache_dir = options_.cache_dir,
              classes = std::weak_ptr<std::vector<ClassState>>(classes_),
              key = restrict_]() -> std::function<void()> {
    auto generated = std::make_shared<StatusOr<std::vector<mdp::Policy>>>(
        set.min_qps < set.max_qps ? SharedPolicySet(*suite, m, set, cache_dir, {})
                                  : InvalidArgumentError("no load range"));
    // On the engine thread, as an event: cached, and installed if still the one in use.
    return [this, generated, classes, key, m] {
      std::shared_ptr<std::vector<ClassState>> live = classes.lock();
      if (!live || live->empty()) return;  // the policy is gone or re-initialised
      generating_.erase(key);
      if (!generated->ok() || (*generated)->empty()) {
        std::fprintf(stderr, "sloserve: ramsis: no policy set over the loaded variants: %s\n",
                     generated->ok() ? "empty" : generated->status().ToString().c_str());
        return;  // the restricted decisions of the current set go on
      }
      variant_sets_[key] = std::move(*generated).value();
      if (restrict_ == key) Install((*live)[0], key, m);
    };
  };
  if (submit_offline_) {
    submit_offline_(std::move(job));
  } else {
    job.work()();  // nothing runs offline work: generated here
  }
}

void RamsisSelection::OnArrival(const Query& q, TimePoint now) {
  size_t c = classes_->size() == 1 ? 0 : NearestSloClass(slo_classes_, q.slo());
  (*classes_)[c].monitor.Record(now);
}

SelectionDecision RamsisSelection::Choose(const WorkerView& worker, const QueueView& queue,
                                          const Query& head, TimePoint now) {
  // Workers added by a plan after Init (ids beyond worker_class_) serve the first class.
  const size_t c = worker.id < worker_class_.size() ? worker_class_[worker.id] : 0;
  ClassState& cls = (*classes_)[c];
  // The load per worker the MDP assumed (OnWorkersChanged).
  const double qps = cls.monitor.RateQps(now) * load_scale_;
  if (options_.fixed_load_qps <= 0) Extend(c, qps);
  const mdp::Policy* policy =
      options_.fixed_load_qps > 0 ? &cls.policies.front() : mdp::SelectPolicy(cls.policies, qps);
  // None covers the load (yet): the fastest (held) variant, late rather than never.
  if (!policy) return restrict_fastest_;
  mdp::Action a = policy->Decide(static_cast<int>(queue.size()), head.deadline - now);
  if (a.variant == kNoId || a.batch <= 0) return restrict_fastest_;
  if (!restrict_.empty() && !std::binary_search(restrict_.begin(), restrict_.end(), a.variant))
    return restrict_fastest_;  // a variant the plan did not load: its set is on its way
  return {a.variant, a.batch};
}

}  // namespace sloserve
