#include "sloserve/policy/dispatch/kairos.h"

#include <algorithm>

#include "sloserve/policy/common_options.h"
#include "sloserve/policy/per_worker.h"
#include "sloserve/profile/profile.h"

namespace sloserve {
namespace kairos_options {
const KeyDecl kPenalty{.name = "penalty",
                       .type = KeyType::kNumber,
                       .default_value = "10",
                       .min = 1,
                       .max = 1e6,
                       .help = "Eq. 8 penalty of a predicted QoS miss, in units of the QoS target"};
}  // namespace kairos_options

StatusOr<std::unique_ptr<DispatchPolicy>> KairosDispatch::Create(const PolicyParams& p) {
  Options o;
  ASSIGN_OR_RETURN(o.qos_factor, ParseQosFactor(p));
  ASSIGN_OR_RETURN(o.penalty, p.GetDouble(kairos_options::kPenalty));
  ASSIGN_OR_RETURN(int64_t window, p.GetInt(kKairosWindowOption));
  o.window = static_cast<int>(window);
  ASSIGN_OR_RETURN(o.variant, p.GetString(kVariantOption));
  ASSIGN_OR_RETURN(o.predictor, LatencyPredictor::ParseOptions(p));
  return std::unique_ptr<DispatchPolicy>(new KairosDispatch(std::move(o)));
}

Status KairosDispatch::Init(const PolicyContext& ctx) {
  RETURN_IF_ERROR(deployment_.Init(ctx, options_.variant).WithPrefix("kairos: "));
  RETURN_IF_ERROR(predictor_.Init(*ctx.suite, ctx.seed));
  suite_ = ctx.suite;
  inflight_.assign(ctx.workers.size(), InFlight());  // grows as workers are added
  return OkStatus();
}

void KairosDispatch::ObserveLaunches(const std::vector<WorkerView>& workers) {
  if (!options_.predictor.online) return;
  for (const WorkerView& w : workers) {
    InFlight& f = PerWorker(inflight_, w.id);
    if (!f.pending || w.busy_until == f.prev_busy_until) continue;
    // busy_until moved: the query we dispatched was launched at `dispatched`.
    predictor_.Observe(w.hardware, f.variant, f.rows, w.busy_until - f.dispatched);
    f.pending = false;
  }
}

bool KairosDispatch::BetterWhenBusyFrees(const Query& q, const std::vector<WorkerView>& workers,
                                         TimePoint now) const {
  const Duration left = q.deadline - now;
  for (size_t c = 0; c < cols_.size(); ++c) {
    const WorkerView& w = workers[cols_[c]];
    if (!w.busy && w.queue_length == 0) continue;
    const VariantId v = deployment_.VariantFor(q.task, w.hardware);
    if (v == kNoId || !deployment_.eligibility.Serves(w, q.task)) continue;
    if (remaining_[c] + predictor_.Predict(w.hardware, v, q.size) <= left) return true;
  }
  return false;
}

bool KairosDispatch::Servable(TaskId task, const std::vector<WorkerView>& workers) {
  // Memoised per decision (stamped with its number).
  if (served_.size() <= task) {
    served_.resize(static_cast<size_t>(task) + 1, 0);
    served_stamp_.resize(served_.size(), 0);
  }
  if (served_stamp_[task] != decision_) {
    served_stamp_[task] = decision_;
    served_[task] = 0;
    for (size_t j : cols_) {
      if (deployment_.eligibility.Serves(workers[j], task)) {
        served_[task] = 1;
        break;
      }
    }
  }
  return served_[task] != 0;
}

void KairosDispatch::Assign(const QueueView& pending, const std::vector<WorkerView>& workers,
                            TimePoint now, std::vector<Assignment>* out) {
  ++decision_;
  ObserveLaunches(workers);
  deployment_.Observe(workers);  // a plan may have added a hardware type
  // Columns: every active worker. Nothing to do unless one can start a query now.
  cols_.clear();
  remaining_.clear();
  bool any_idle = false;
  for (size_t j = 0; j < workers.size(); ++j) {
    const WorkerView& w = workers[j];
    if (!w.active || w.hardware >= deployment_.coefficient.size() ||
        deployment_.coefficient[w.hardware] <= 0) {
      continue;
    }
    const bool idle = !w.busy && w.queue_length == 0;
    any_idle = any_idle || idle;
    Duration rem = w.busy ? std::max(Duration(0), w.busy_until - now) : Duration(0);
    if (w.queue_length > 0 && w.queued_rows > 0) {  // not ours, but be safe
      rem += predictor_.Predict(w.hardware, deployment_.variant, static_cast<int>(w.queued_rows));
    }
    cols_.push_back(j);
    remaining_.push_back(rem);
  }
  if (!any_idle || pending.empty()) return;
  const int n = static_cast<int>(cols_.size());
  const bool uniform = deployment_.eligibility.uniform();
  // Rows: the first `window` pending queries; on a multi-model pool, the first `window`
  // that some active instance serves, so queries of a model with none (until a plan
  // activates one) do not fill the window and starve the others.
  rows_.clear();
  for (size_t i = 0; i < pending.size() && rows_.size() < static_cast<size_t>(options_.window);
       ++i) {
    if (uniform || Servable(pending.at(i).task, workers)) rows_.push_back(static_cast<uint32_t>(i));
  }
  const int m = static_cast<int>(rows_.size());
  if (m == 0) return;
  cost_.resize(static_cast<size_t>(m) * static_cast<size_t>(n));
  penalized_.resize(cost_.size());
  excluded_.assign(cost_.size(), 0);
  // Above any cost of an allowed pair (coefficients are at most 1), so the matching
  // leaves as few queries as it can on instances that cannot serve them.
  double excluded_cost = 0;
  // Prediction per (query, hardware type): one noise draw per pair of this decision.
  for (int i = 0; i < m; ++i) {
    const Query& q = pending.at(rows_[static_cast<size_t>(i)]);
    const double slo = static_cast<double>(q.slo().count());
    const double budget =
        options_.qos_factor * slo - static_cast<double>((now - q.arrival).count());
    const double penalty = options_.penalty * slo;
    for (int j = 0; j < n; ++j) {
      const size_t idx = static_cast<size_t>(i) * static_cast<size_t>(n) + static_cast<size_t>(j);
      const WorkerView& w = workers[cols_[static_cast<size_t>(j)]];
      const VariantId v = deployment_.VariantFor(q.task, w.hardware);
      if (!uniform && (v == kNoId || !deployment_.eligibility.Serves(w, q.task))) {
        excluded_[idx] = 1;
        penalized_[idx] = 1;
        continue;  // its cost is set below, once the largest allowed cost is known
      }
      double l;
      if (v == kNoId) {
        l = penalty;
      } else {
        l = static_cast<double>(
            (remaining_[static_cast<size_t>(j)] + predictor_.PredictNoisy(w.hardware, v, q.size))
                .count());
      }
      const bool violates = v == kNoId || l > budget;
      penalized_[idx] = violates ? 1 : 0;
      cost_[idx] = deployment_.CoefficientFor(q.task, w.hardware) * (violates ? penalty : l);
      excluded_cost = std::max(excluded_cost, cost_[idx]);
    }
  }
  if (!uniform) {
    excluded_cost = 2 * excluded_cost * static_cast<double>(m + 1) + 1;
    for (size_t idx = 0; idx < cost_.size(); ++idx) {
      if (excluded_[idx]) cost_[idx] = excluded_cost;
    }
  }
  ++solves_;
  if (!solver_.Solve(m, n, cost_, &match_).ok()) return;  // costs are finite: cannot fail
  for (int i = 0; i < m; ++i) {
    const int j = match_[static_cast<size_t>(i)];
    if (j < 0) continue;
    const WorkerView& w = workers[cols_[static_cast<size_t>(j)]];
    if (w.busy || w.queue_length > 0) continue;  // wait for that instance: stay central
    const Query& q = pending.at(rows_[static_cast<size_t>(i)]);
    const size_t idx = static_cast<size_t>(i) * static_cast<size_t>(n) + static_cast<size_t>(j);
    if (excluded_[idx]) continue;  // no instance serving its model was left: stays central
    if (penalized_[idx] && BetterWhenBusyFrees(q, workers, now)) {
      // A QoS-violating match to an idle instance waits in the central queue while a
      // busy instance would still finish the query by its deadline: that instance's
      // completion is an event, so the query is reconsidered then. Otherwise waiting
      // cannot help (and with no further event nothing would ever dispatch it): go now.
      continue;
    }
    out->push_back({rows_[static_cast<size_t>(i)], w.id});
    InFlight& f = PerWorker(inflight_, w.id);
    f.dispatched = now;
    f.prev_busy_until = w.busy_until;
    f.rows = q.size;
    f.variant = deployment_.VariantFor(q.task, w.hardware);
    f.pending = f.variant != kNoId;
  }
}

}  // namespace sloserve
