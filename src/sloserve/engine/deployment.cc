#include "sloserve/engine/deployment.h"

#include <cstdio>

namespace sloserve {

StatusOr<Deployment> ResolveDeployment(const ProfileSuite& suite, const DeploymentSpec& spec) {
  Deployment d;
  if (suite.tasks().empty() || suite.hardware().empty()) {
    return FailedPreconditionError("suite '" + suite.name() + "' has no tasks or no hardware");
  }
  if (!spec.task.empty()) {
    auto t = suite.FindTask(spec.task);
    if (!t)
      return NotFoundError("task: '" + spec.task + "' is not in suite '" + suite.name() + "'");
    d.task = *t;
  }
  if (!spec.hardware.empty()) {
    auto h = suite.FindHardware(spec.hardware);
    if (!h) {
      return NotFoundError("hardware: '" + spec.hardware + "' is not in suite '" + suite.name() +
                           "'");
    }
    d.hardware = *h;
  }
  if (spec.workers < 1 || spec.workers > 100000) {
    return InvalidArgumentError("workers: must be between 1 and 100000 (got " +
                                std::to_string(spec.workers) + ")");
  }
  d.slo = spec.slo.count() > 0 ? spec.slo : suite.tasks()[d.task].default_slo;
  if (d.slo <= Duration(0)) return InvalidArgumentError("slo_ms: must be positive");
  if (d.slo > Seconds(3600)) return InvalidArgumentError("slo_ms: more than an hour is not an SLO");

  // An SLO that no variant can meet even alone at batch 1 is a configuration error.
  Duration fastest = Duration::max();
  std::string fastest_name;
  for (VariantId v : suite.VariantsOfTask(d.task)) {
    const LatencyDistribution* l = suite.Latency(d.hardware, v, 1);
    if (!l) continue;
    Duration q = l->Quantile(spec.slo_check_quantile);
    if (q < fastest) {
      fastest = q;
      fastest_name = suite.variants()[v].name;
    }
  }
  if (fastest == Duration::max()) {
    return FailedPreconditionError("task '" + suite.tasks()[d.task].name +
                                   "' has no profiled variant on hardware '" +
                                   suite.hardware()[d.hardware].name + "'");
  }
  if (fastest > d.slo) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "slo_ms: impossible SLO %.3f ms: the fastest variant (%s) takes %.3f ms at "
                  "batch 1 on %s",
                  ToMillis(d.slo), fastest_name.c_str(), ToMillis(fastest),
                  suite.hardware()[d.hardware].name.c_str());
    return InvalidArgumentError(buf);
  }
  std::vector<VariantId> preload;
  const bool none = spec.preload == "none";
  if (!none && spec.preload != "all" && !spec.preload.empty()) {
    size_t pos = 0;
    while (pos <= spec.preload.size()) {
      size_t comma = spec.preload.find(',', pos);
      std::string name =
          spec.preload.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      auto v = suite.FindVariant(name);
      if (!v)
        return NotFoundError("preload: unknown variant '" + name + "' in suite '" + suite.name() +
                             "'");
      preload.push_back(*v);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  for (int i = 0; i < spec.workers; ++i) {
    WorkerSpec w;
    w.name = "w" + std::to_string(i);
    w.hardware = d.hardware;
    w.preload = preload;
    w.preload_none = none;
    d.workers.push_back(std::move(w));
  }
  return d;
}

}  // namespace sloserve
