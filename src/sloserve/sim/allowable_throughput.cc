#include "sloserve/sim/allowable_throughput.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sloserve/sim/simulation.h"

namespace sloserve {
namespace {

StatusOr<ThroughputProbe> Probe(const RunSpec& base, const ProfileSuite& suite, double qps,
                                double quantile) {
  RunSpec spec = base;
  spec.arrival.rate_qps = qps;
  ASSIGN_OR_RETURN(RunResult r, RunSimulation(spec, suite));
  ThroughputProbe p;
  p.qps = qps;
  p.violation_rate = r.summary.violation_rate;
  p.p99_ms = r.summary.p99_ms;
  p.ok = r.summary.arrived > 0 && r.summary.violation_rate <= 1.0 - quantile + 1e-12;
  return p;
}

}  // namespace

StatusOr<ThroughputSearchResult> FindAllowableThroughput(const RunSpec& base,
                                                         const ProfileSuite& suite,
                                                         const ThroughputSearchOptions& o) {
  if (base.arrival.kind != "poisson" && base.arrival.kind != "gamma" &&
      base.arrival.kind != "constant") {
    return InvalidArgumentError(
        "allowable throughput: workload.arrival must be poisson, gamma "
        "or constant (got '" +
        base.arrival.kind + "')");
  }
  // Named one by one: "bad search options" left the user to guess which.
  if (!(o.start_qps > 0)) {
    return InvalidArgumentError("allowable throughput: start_qps must be > 0 (got " +
                                std::to_string(o.start_qps) + ")");
  }
  if (!(o.rel_tol > 0)) {
    return InvalidArgumentError("allowable throughput: rel_tol must be > 0 (got " +
                                std::to_string(o.rel_tol) + ")");
  }
  if (!(o.quantile > 0 && o.quantile < 1)) {
    return InvalidArgumentError("allowable throughput: quantile must be in (0, 1) (got " +
                                std::to_string(o.quantile) + ")");
  }
  if (!(o.min_qps > 0) || !(o.max_qps >= o.min_qps) || o.max_probes < 2) {
    return InvalidArgumentError(
        "allowable throughput: need 0 < min_qps <= max_qps and max_probes >= 2");
  }
  ThroughputSearchResult result;
  int probes = 0;
  auto probe = [&](double qps) -> StatusOr<bool> {
    if (++probes > o.max_probes) {
      return InternalError("allowable throughput: more than " + std::to_string(o.max_probes) +
                           " probes");
    }
    ASSIGN_OR_RETURN(ThroughputProbe p, Probe(base, suite, qps, o.quantile));
    result.probes.push_back(p);
    return p.ok;
  };
  double ok = 0, fail = 0;
  double x = std::clamp(o.start_qps, o.min_qps, o.max_qps);
  ASSIGN_OR_RETURN(bool first, probe(x));
  if (first) {
    ok = x;
    while (true) {
      if (ok >= o.max_qps) return result.allowable_qps = ok, result;
      x = std::min(ok * 2, o.max_qps);
      ASSIGN_OR_RETURN(bool good, probe(x));
      if (!good) {
        fail = x;
        break;
      }
      ok = x;
    }
  } else {
    fail = x;
    while (true) {
      x = fail / 2;
      if (x < o.min_qps) return result.allowable_qps = 0, result;
      ASSIGN_OR_RETURN(bool good, probe(x));
      if (good) {
        ok = x;
        break;
      }
      fail = x;
    }
  }
  while (fail - ok > o.rel_tol * ok) {
    x = (ok + fail) / 2;
    ASSIGN_OR_RETURN(bool good, probe(x));
    (good ? ok : fail) = x;
  }
  result.allowable_qps = ok;
  return result;
}

StatusOr<HillClimbResult> HillClimbOption(const RunSpec& base, const ProfileSuite& suite,
                                          const ThroughputSearchOptions& options,
                                          const std::string& option, int64_t lo, int64_t hi,
                                          int64_t step, int64_t start) {
  if (step <= 0 || lo > hi || start < lo || start > hi) {
    return InvalidArgumentError("hill climbing '" + option + "': need lo <= start <= hi, step > 0");
  }
  HillClimbResult out;
  std::map<int64_t, ThroughputSearchResult> cache;
  auto eval = [&](int64_t v) -> StatusOr<double> {
    auto it = cache.find(v);
    if (it == cache.end()) {
      RunSpec spec = base;
      spec.policy.options[option] = std::to_string(v);
      ASSIGN_OR_RETURN(ThroughputSearchResult r, FindAllowableThroughput(spec, suite, options));
      out.evaluated.emplace_back(v, r.allowable_qps);
      it = cache.emplace(v, std::move(r)).first;
    }
    return it->second.allowable_qps;
  };
  // Coarse sweep first (about 10 grid points, multiples of `step` from lo, plus `start`),
  // so the climb does not stall on a flat or noisy stretch near `start`.
  int64_t cur = start;
  ASSIGN_OR_RETURN(double cur_qps, eval(cur));
  const int64_t grid = std::max<int64_t>(step, (hi - lo) / 10 / step * step);
  for (int64_t v = lo; v <= hi; v += grid) {
    ASSIGN_OR_RETURN(double q, eval(v));
    if (q > cur_qps) {
      cur = v;
      cur_qps = q;
    }
  }
  while (true) {
    int64_t best = cur;
    double best_qps = cur_qps;
    for (int64_t next : {cur - step, cur + step}) {
      if (next < lo || next > hi) continue;
      ASSIGN_OR_RETURN(double q, eval(next));
      if (q > best_qps) {
        best = next;
        best_qps = q;
      }
    }
    if (best == cur) break;
    cur = best;
    cur_qps = best_qps;
  }
  out.best_value = cur;
  out.best = cache[cur];
  return out;
}

}  // namespace sloserve
