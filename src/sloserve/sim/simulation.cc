#include "sloserve/sim/simulation.h"

#include "sloserve/config/engine_options.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "sloserve/engine/deployment.h"
#include "sloserve/engine/driver.h"
#include "sloserve/engine/engine.h"
#include "sloserve/exec/profile_executor.h"
#include "sloserve/profile/exec_time_model.h"
#include "sloserve/sim/future_load.h"
#include "sloserve/sim/interval_latency.h"
#include "sloserve/workload/model_arrivals.h"
#include "sloserve/workload/query_size_sampler.h"

namespace sloserve {
namespace {

// The arrivals of a run: `next()` draws the next arrival time, `admit` builds and submits
// the query. A template rather than std::function: this runs for every query.
template <class Next, class Admit>
class LambdaArrivals : public ArrivalSource {
 public:
  LambdaArrivals(Next next, Admit admit)
      : next_fn_(std::move(next)), admit_(std::move(admit)), next_(next_fn_()) {}
  TimePoint NextArrival() const override { return next_ ? *next_ : kTimeInfinite; }
  void AdmitNext(Engine& engine, TimePoint now) override {
    admit_(engine, now);
    next_ = next_fn_();
  }

 private:
  Next next_fn_;
  Admit admit_;
  std::optional<TimePoint> next_;
};

}  // namespace

StatusOr<RunResult> RunSimulation(const RunSpec& spec, const ProfileSuite& suite,
                                  const SimHooks& hooks) {
  const auto wall_start = std::chrono::steady_clock::now();
  // Multi-model deployments: task i of the (composed) suite is spec.models[i].
  const bool multi = !spec.models.empty();
  DeploymentSpec dspec = DeploymentSpecOf(spec);
  if (multi) dspec.slo = Duration(0);  // each model's SLO is its task's in the composed suite
  ASSIGN_OR_RETURN(Deployment dep, ResolveDeployment(suite, dspec));
  ASSIGN_OR_RETURN(PolicySet policies, MakePolicySet(spec.policy));
  ASSIGN_OR_RETURN(auto sizes, MakeQuerySizeSampler(spec.sizes));
  // The arrival horizon of a process: its trace window (or synthetic horizon), cut short
  // by `duration_s` when that is set.
  auto horizon_of = [](const ArrivalSpec& a) -> StatusOr<Duration> {
    ASSIGN_OR_RETURN(RateSeries rates, EffectiveRateSeries(a));
    Duration h = rates.Span();
    if (a.horizon.count() > 0 && a.horizon < h) h = a.horizon;
    return h;
  };
  std::unique_ptr<ArrivalProcess> arrivals;
  std::unique_ptr<ModelArrivals> model_arrivals;
  std::vector<double> model_load(spec.models.size(), 0.0);
  std::vector<ModelStream> streams;
  double load_qps = 0;
  Duration horizon{};
  if (!multi) {
    ASSIGN_OR_RETURN(arrivals, MakeArrivalProcess(spec.arrival, spec.seed));
    ASSIGN_OR_RETURN(load_qps, MeanRateQps(spec.arrival));
    ASSIGN_OR_RETURN(horizon, horizon_of(spec.arrival));
  } else {
    bool shared = false;
    for (const ModelSpec& m : spec.models) {
      streams.push_back({m.name, m.share, m.arrival ? &*m.arrival : nullptr});
      shared = shared || !m.arrival;
    }
    double shared_qps = 0;
    if (shared) {
      ASSIGN_OR_RETURN(shared_qps, MeanRateQps(spec.arrival));
      ASSIGN_OR_RETURN(horizon, horizon_of(spec.arrival));
    }
    for (size_t i = 0; i < spec.models.size(); ++i) {
      const ModelSpec& m = spec.models[i];
      if (!m.arrival) {
        model_load[i] = m.share * shared_qps;
      } else {
        ASSIGN_OR_RETURN(model_load[i], MeanRateQps(*m.arrival));
        ASSIGN_OR_RETURN(Duration h, horizon_of(*m.arrival));
        horizon = std::max(horizon, h);
      }
      load_qps += model_load[i];
    }
    ASSIGN_OR_RETURN(model_arrivals, ModelArrivals::Create(spec.arrival, streams, spec.seed));
  }
  const double horizon_us = static_cast<double>(horizon.count());

  ProfileExecutor profile_executor(ServiceTimeModel(&suite, spec.service, spec.seed));
  WorkerExecutor& executor = profile_executor;
  DriverOptions dopts;
  dopts.plan_interval = spec.plan_interval;
  dopts.offline_delay = spec.offline_delay;
  Driver driver(dopts);
  EngineOptions eopts = EngineOptionsFor(spec, Face::kSim);
  eopts.task = dep.task;
  eopts.slo = dep.slo;
  eopts.submit_offline = driver.OfflineSubmitter();  // inline, result after offline_delay
  eopts.future_peak_qps =
      FuturePeakFunction(std::make_shared<FutureLoad>(&spec.arrival, streams, dep.task, spec.seed));
  RETURN_IF_ERROR(AddModelOverrides(spec, suite, &policies, &eopts));
  // Declared before the engine so it outlives the engine's sink.
  std::optional<IntervalLatencies> interval_latency;
  ASSIGN_OR_RETURN(auto engine, Engine::Create(&suite, dep.workers, std::move(policies), &executor,
                                               eopts, spec.seed));
  if (spec.series_latency) interval_latency.emplace(spec.series_interval);
  if (interval_latency) {
    engine->set_sink([&](const QueryRecord& r) {
      interval_latency->Add(r);
      if (hooks.on_record) hooks.on_record(r);
    });
  } else if (hooks.on_record) {
    engine->set_sink(hooks.on_record);
  }

  Rng size_rng = MakeRng(spec.seed, "workload/sizes");
  // Multiple SLOs: each query's SLO drawn from the mix by weight.
  Rng slo_rng = MakeRng(spec.seed, "workload/slo");
  double slo_weight = 0;
  for (const auto& [slo, w] : spec.slo_mix) slo_weight += w;
  auto draw_slo = [&]() -> Duration {
    double u = Uniform01(slo_rng) * slo_weight;
    for (const auto& [slo, w] : spec.slo_mix) {
      if ((u -= w) < 0) return slo;
    }
    return spec.slo_mix.back().first;
  };
  // Apps of arrivals (dynamic models): weights over the suite's exec_hist apps. Weights
  // beyond the suite's apps name apps without a histogram (pooled distribution).
  std::vector<double> app_cum = spec.app_weights;
  if (app_cum.empty()) app_cum.assign(ExecTimeTable::Build(suite).apps().size(), 1.0);
  for (size_t i = 1; i < app_cum.size(); ++i) app_cum[i] += app_cum[i - 1];
  Rng app_rng = MakeRng(spec.seed, "workload/apps");
  auto draw_app = [&]() -> AppId {
    if (app_cum.size() <= 1) return 0;
    const double u = Uniform01(app_rng) * app_cum.back();
    return static_cast<AppId>(std::upper_bound(app_cum.begin(), app_cum.end(), u) -
                              app_cum.begin());
  };
  RunResult result;
  result.spec = spec;
  result.spec.task =
      multi ? std::to_string(spec.models.size()) + " models" : suite.tasks()[dep.task].name;
  // A mix stays as written ("type:count,..."); a single type gets its resolved name.
  const bool mix = spec.hardware.find_first_of(":,") != std::string::npos;
  result.spec.hardware = mix ? spec.hardware : suite.hardware()[dep.hardware].name;
  result.spec.workers = static_cast<int>(dep.workers.size());
  result.spec.slo = multi ? Duration(0) : dep.slo;  // multi-model: each model's, in its row
  result.load_qps = load_qps;
  int last_progress = -1;
  size_t next_model = 0;  // the model of the next arrival (multi-model runs)
  LambdaArrivals source(
      [&]() -> std::optional<TimePoint> {
        if (!model_arrivals) return arrivals->Next();
        const std::optional<ModelArrivals::Arrival> a = model_arrivals->Next();
        if (!a) return std::nullopt;
        next_model = a->model;
        return a->at;
      },
      [&](Engine& e, TimePoint now) {
        Query q;
        q.task = multi ? static_cast<TaskId>(next_model) : dep.task;
        q.size = sizes->SampleAt(size_rng, now - TimePoint{});
        q.app = std::min<AppId>(draw_app(), static_cast<AppId>(app_cum.size() - 1));
        if (q.app < spec.app_priorities.size()) q.priority = spec.app_priorities[q.app];
        if (multi && spec.models[next_model].priority > 0)
          q.priority = spec.models[next_model].priority;
        q.deadline = now + (multi                  ? suite.tasks()[q.task].default_slo
                            : spec.slo_mix.empty() ? dep.slo
                                                   : draw_slo());
        e.Submit(q, now);
        if (hooks.on_progress && horizon_us > 0) {
          int pct = static_cast<int>(100.0 * static_cast<double>(now.time_since_epoch().count()) /
                                     horizon_us);
          if (pct != last_progress) {
            last_progress = pct;
            hooks.on_progress(std::min(1.0, pct / 100.0));
          }
        }
      });
  if (hooks.on_engine) hooks.on_engine(*engine);
  driver.Bind(engine.get(), &executor);
  driver.SetArrivals(&source);
  // Virtual time: the driver jumps the clock from event to event.
  ManualClock clock;
  const int64_t events = driver.RunVirtual(&clock);
  const TimePoint now = clock.Now();
  if (engine->in_system() != 0) {
    return InternalError("simulation ended with " + std::to_string(engine->in_system()) +
                         " queries neither completed nor dropped (" + engine->DescribeBacklog() +
                         ")");
  }
  // Elapsed = the arrival horizon, or later if the backlog drained after it.
  TimePoint end = std::max(now, TimePoint(horizon));
  engine->CloseSeries(end);
  result.summary = engine->Summarize(end);
  if (multi) {
    // Per model, from the engine (docs/multi-model.md "Engine": counts exact, latency
    // quantiles from a log histogram within about 1%).
    const std::vector<MetricsSummary> per_model = engine->SummarizeByModel(end);
    for (size_t i = 0; i < spec.models.size(); ++i) {
      const ModelSpec& m = spec.models[i];
      ModelResult mr;
      mr.name = m.name;
      mr.task = m.task.empty() ? "" : m.task;
      mr.load_qps = model_load[i];
      mr.share = m.arrival ? 0.0 : m.share;
      mr.slo = suite.tasks()[i].default_slo;
      mr.priority = m.priority;
      if (m.policy) mr.policy = m.policy->batching + "/" + m.policy->selection;
      mr.summary = per_model[i];
      result.models.push_back(std::move(mr));
    }
  }
  result.series = engine->metrics().series();
  result.series_interval = spec.series_interval;
  if (interval_latency)
    result.series_p99_ms = interval_latency->QuantileMs(0.99, result.series.size());
  result.events = events;
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace sloserve
