#include "sloserve/mdp/policy.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "sloserve/mdp/model.h"
#include "sloserve/mdp/solver.h"
#include "sloserve/profile/profile.h"

namespace sloserve::mdp {

Policy::Policy(PolicyData data) : d_(std::move(data)) {
  if (d_.discretization.kind == DiscretizationKind::kFixedLength && d_.discretization.d > 0) {
    step_us_ = std::max<int64_t>(1, d_.slo.count() / d_.discretization.d);
  }
}

int Policy::LevelOf(Duration head_slack) const {
  const auto& lv = d_.levels_us;
  const int nl = static_cast<int>(lv.size());
  const int64_t s = head_slack.count();
  if (nl == 0 || s < lv.front()) return 0;
  int j;
  if (step_us_ > 0) {  // FLD: levels are within rounding of multiples of SLO/D
    j = static_cast<int>(std::min<int64_t>(nl - 1, s / step_us_));
    while (j + 1 < nl && lv[j + 1] <= s) ++j;
    while (j > 0 && lv[j] > s) --j;
  } else {
    j = static_cast<int>(std::upper_bound(lv.begin(), lv.end(), s) - lv.begin()) - 1;
  }
  return std::max(j, 0);
}

Action Policy::Decide(int queued, Duration head_slack) const {
  if (queued <= 0 || d_.table.empty()) return {};
  if (queued > d_.max_queue) return d_.full_action;
  return d_.table[static_cast<size_t>(queued - 1) * d_.levels_us.size() + LevelOf(head_slack)];
}

std::string Policy::VariantName(VariantId id) const {
  for (size_t i = 0; i < d_.variant_ids.size(); ++i) {
    if (d_.variant_ids[i] == id) return d_.variant_names[i];
  }
  return "-";
}

Evaluation EvaluateChoice(const MdpModel& m, const std::vector<int>& choice,
                          const SolverOptions& options) {
  ChainStats chain = Stationary(m, choice, options);
  Evaluation ev;
  ev.iterations = chain.iterations;
  ev.converged = chain.converged;
  const bool cancelled = options.cancel != nullptr && options.cancel->load();
  // An incomplete choice, or a cancelled power iteration: no meaningful expectations.
  if (chain.invalid_state >= 0 || cancelled) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    ev.expected_accuracy = ev.expected_violation = ev.accuracy_per_query = nan;
    ev.full_state_probability = ev.mean_batch = nan;
    ev.stationary = std::move(chain.stationary);
    return ev;
  }
  double served = 0, met = 0, acc_met = 0, epochs = 0;
  for (int s = 1; s < m.num_states(); ++s) {
    const double pr = chain.stationary[s];
    if (pr == 0 || choice[s] < 0) continue;
    const Pair& p = m.pairs()[choice[s]];
    epochs += pr;
    served += pr * p.action.batch;
    if (p.met) {
      met += pr * p.action.batch;
      acc_met += pr * p.action.batch * m.variants()[p.action.variant].accuracy;
    }
  }
  if (served > 0) {
    ev.expected_violation = 1.0 - met / served;
    ev.accuracy_per_query = acc_met / served;
  }
  if (met > 0) ev.expected_accuracy = acc_met / met;
  if (epochs > 0) ev.mean_batch = served / epochs;
  ev.full_state_probability = chain.stationary[m.full_state()];
  ev.stationary = std::move(chain.stationary);
  return ev;
}

namespace {

Action ToAction(const MdpModel& m, const Pair& p) {
  return {m.variants()[p.action.variant].id, p.action.batch};
}

}  // namespace

StatusOr<Policy> GeneratePolicy(const ProfileSuite& suite, const MdpOptions& options) {
  return GeneratePolicy(suite, options, nullptr, nullptr);
}

StatusOr<Policy> GeneratePolicy(const ProfileSuite& suite, const MdpOptions& options,
                                const std::vector<double>* warm_start,
                                std::vector<double>* values_out) {
  ASSIGN_OR_RETURN(MdpModel m, MdpModel::Build(suite, options));
  return PolicyFromModel(suite, m, warm_start, values_out);
}

StatusOr<Policy> PolicyFromModel(const ProfileSuite& suite, const MdpModel& m,
                                 const std::vector<double>* warm_start,
                                 std::vector<double>* values_out) {
  const MdpOptions& o = m.options();
  SolveResult sol = Solve(m, o.solver, warm_start);
  // A cancelled solve stopped early: its choice may be incomplete (-1 entries), unusable.
  if (o.solver.cancel != nullptr && o.solver.cancel->load()) {
    return UnavailableError("policy generation cancelled");
  }
  if (values_out) *values_out = sol.values;
  Evaluation ev = EvaluateChoice(m, sol.choice, o.solver);

  PolicyData d;
  d.variant_names = m.VariantNames();
  d.key = CacheKey(suite, o, d.variant_names, /*include_load=*/true);
  d.suite = suite.name();
  d.hardware = o.hardware;
  d.task = o.task;
  for (const ModelVariant& v : m.variants()) d.variant_ids.push_back(v.id);
  d.slo = o.slo;
  d.workers = o.workers;
  d.arrival = o.arrival;
  d.load_qps = o.load_qps;
  d.discretization = o.discretization;
  d.batching = o.batching;
  d.max_queue = o.max_queue;
  d.latency_quantile = o.latency_quantile;
  d.criterion = o.solver.criterion;
  d.levels_us = m.levels_us();
  for (int n = 1; n <= m.max_queue(); ++n) {
    for (int j = 0; j < m.num_levels(); ++j) {
      d.table.push_back(ToAction(m, m.pairs()[sol.choice[m.StateIndex(n, j)]]));
    }
  }
  d.full_action = ToAction(m, m.pairs()[sol.choice[m.full_state()]]);
  d.expected_accuracy = ev.expected_accuracy;
  d.expected_violation = ev.expected_violation;
  d.accuracy_per_query = ev.accuracy_per_query;
  d.full_state_probability = ev.full_state_probability;
  d.converged = sol.converged && ev.converged;
  d.sweeps = sol.sweeps;
  d.notes = m.notes();
  const double per_worker = o.load_qps / o.workers;
  const double capacity = m.SloCapacityQps();
  if (per_worker > capacity) {
    d.overloaded = true;
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "overloaded: %.1f qps per worker exceeds %.1f qps, the best throughput of any "
                  "action within the SLO (peak without SLO: %.1f qps); degraded policy\n",
                  per_worker, capacity, m.PeakWorkerQps());
    d.notes += buf;
  }
  if (ev.expected_violation > 0.05) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "degraded: expected SLO violation %.2f%% > 5%%\n",
                  100 * ev.expected_violation);
    d.notes += buf;
  }
  if (!sol.converged) {
    d.notes += "value iteration stopped at max_sweeps before the span bound met tolerance\n";
  }
  if (!ev.converged) d.notes += "power iteration stopped before convergence\n";
  return Policy(std::move(d));
}

StatusOr<Evaluation> EvaluatePolicy(const ProfileSuite& suite, const MdpOptions& options,
                                    const Policy& policy) {
  ASSIGN_OR_RETURN(MdpModel m, MdpModel::Build(suite, options));
  return EvaluatePolicyInModel(m, policy);
}

StatusOr<Evaluation> EvaluatePolicyInModel(const MdpModel& m, const Policy& policy) {
  const PolicyData& d = policy.data();
  if (d.max_queue != m.max_queue() || d.levels_us != m.levels_us()) {
    return InvalidArgumentError(
        "policy does not match the MDP of these options (queue bound or slack levels differ)");
  }
  std::vector<int> choice(m.num_states(), -1);
  for (int s = 1; s < m.num_states(); ++s) {
    const Action want =
        s == m.full_state()
            ? d.full_action
            : d.table[static_cast<size_t>(m.QueueOf(s) - 1) * m.num_levels() + m.LevelOfState(s)];
    for (const Pair* p = m.PairsBegin(s); p != m.PairsEnd(s); ++p) {
      if (ToAction(m, *p) == want) {
        choice[s] = static_cast<int>(p - m.pairs().data());
        break;
      }
    }
    if (choice[s] < 0) {
      return InvalidArgumentError("policy action (variant " + std::to_string(want.variant) +
                                  ", batch " + std::to_string(want.batch) + ") of state " +
                                  std::to_string(s) + " is not valid in this MDP");
    }
  }
  return EvaluateChoice(m, choice, m.options().solver);
}

}  // namespace sloserve::mdp
