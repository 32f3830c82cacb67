#include "sloserve/mdp/options.h"

#include <cmath>
#include <cstdio>

#include "sloserve/profile/profile.h"

namespace sloserve::mdp {

Status ValidateOptions(const MdpOptions& o) {
  if (o.slo <= Duration(0)) return InvalidArgumentError("slo must be > 0");
  if (o.workers < 1) return InvalidArgumentError("workers must be >= 1");
  if (!(o.load_qps > 0) || !std::isfinite(o.load_qps)) {
    return InvalidArgumentError("load_qps must be > 0");
  }
  if (o.arrival.kind == ArrivalKind::kGamma && !(o.arrival.cv > 0 && o.arrival.cv <= 10)) {
    return InvalidArgumentError("gamma arrivals: cv must be in (0, 10]");
  }
  if (o.discretization.kind == DiscretizationKind::kFixedLength &&
      (o.discretization.d < 1 || o.discretization.d > 10000)) {
    return InvalidArgumentError("fld: D must be in [1, 10000]");
  }
  if (o.max_queue < 1 || o.max_queue > 512) {
    return InvalidArgumentError("max_queue must be in [1, 512]");
  }
  if (!(o.latency_quantile >= 0 && o.latency_quantile <= 1)) {
    return InvalidArgumentError("latency_quantile must be in [0, 1]");
  }
  if (o.solver.max_sweeps < 1 || o.solver.fixed_sweeps < 1 || o.solver.eval_max_iterations < 1) {
    return InvalidArgumentError("solver sweep/iteration limits must be >= 1");
  }
  if (!(o.solver.tolerance > 0) || !(o.solver.eval_tolerance > 0)) {
    return InvalidArgumentError("solver tolerances must be > 0");
  }
  return OkStatus();
}

std::string ArrivalName(const ArrivalModel& a) {
  if (a.kind == ArrivalKind::kPoisson) return "poisson";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "gamma(cv=%g)", a.cv);
  return buf;
}

std::string DiscretizationName(const Discretization& d) {
  if (d.kind == DiscretizationKind::kModelBased) return "md";
  return "fld(D=" + std::to_string(d.d) + ")";
}

std::string BatchingName(BatchingKind b) {
  return b == BatchingKind::kMaximal ? "maximal" : "variable";
}

std::string CriterionName(Criterion c) {
  return c == Criterion::kAccuracyPerQuery ? "accuracy-per-query" : "undiscounted-sweeps";
}

StatusOr<ArrivalModel> ParseArrival(const std::string& kind, double cv) {
  ArrivalModel a;
  if (kind == "poisson") {
    a.kind = ArrivalKind::kPoisson;
    a.cv = 1.0;
  } else if (kind == "gamma") {
    a.kind = ArrivalKind::kGamma;
    a.cv = cv;
  } else {
    return InvalidArgumentError("arrival: expected poisson or gamma, got '" + kind + "'");
  }
  return a;
}

StatusOr<Discretization> ParseDiscretization(const std::string& kind, int d) {
  Discretization out;
  if (kind == "md") {
    out.kind = DiscretizationKind::kModelBased;
  } else if (kind == "fld") {
    out.kind = DiscretizationKind::kFixedLength;
    out.d = d;
  } else {
    return InvalidArgumentError("discretization: expected md or fld, got '" + kind + "'");
  }
  return out;
}

StatusOr<BatchingKind> ParseBatching(const std::string& s) {
  if (s == "maximal") return BatchingKind::kMaximal;
  if (s == "variable") return BatchingKind::kVariable;
  return InvalidArgumentError("batching: expected maximal or variable, got '" + s + "'");
}

StatusOr<Criterion> ParseCriterion(const std::string& s) {
  if (s == "accuracy-per-query") return Criterion::kAccuracyPerQuery;
  if (s == "undiscounted-sweeps") return Criterion::kUndiscountedSweeps;
  return InvalidArgumentError(
      "criterion: expected accuracy-per-query or undiscounted-sweeps, got '" + s + "'");
}

std::string CacheKey(const ProfileSuite& suite, const MdpOptions& o,
                     const std::vector<std::string>& variant_names, bool include_load) {
  std::string key =
      "suite=" + suite.name() + ";hw=" + o.hardware + ";task=" + o.task + ";variants=";
  for (size_t i = 0; i < variant_names.size(); ++i) {
    key += (i ? "," : "") + variant_names[i];
  }
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                ";slo_us=%lld;workers=%d;arrival=%s;disc=%s;batching=%s;max_queue=%d;q=%.6g;"
                "criterion=%s",
                static_cast<long long>(o.slo.count()), o.workers, ArrivalName(o.arrival).c_str(),
                DiscretizationName(o.discretization).c_str(), BatchingName(o.batching).c_str(),
                o.max_queue, o.latency_quantile, CriterionName(o.solver.criterion).c_str());
  key += buf;
  if (o.solver.criterion == Criterion::kUndiscountedSweeps) {
    key += ";sweeps=" + std::to_string(o.solver.fixed_sweeps);
  }
  if (include_load) {
    std::snprintf(buf, sizeof(buf), ";load_qps=%.9g", o.load_qps);
    key += buf;
  }
  return key;
}

}  // namespace sloserve::mdp
