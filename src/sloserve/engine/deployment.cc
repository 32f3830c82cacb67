#include "sloserve/engine/deployment.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sloserve/core/declared_key.h"

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
  // "type" or a heterogeneous mix "type:count,type:count" (the mix sets the worker count).
  std::vector<std::pair<HardwareId, int>> mix;
  int workers = spec.workers;
  if (!spec.hardware.empty()) {
    std::stringstream ss(spec.hardware);
    for (std::string item; std::getline(ss, item, ',');) {
      size_t colon = item.find(':');
      std::string name = item.substr(0, colon);
      auto h = suite.FindHardware(name);
      if (!h)
        return NotFoundError("hardware: '" + name + "' is not in suite '" + suite.name() + "'");
      int count = 0;
      if (colon != std::string::npos) {
        const std::optional<int64_t> c = ParseInteger(std::string_view(item).substr(colon + 1));
        if (!c || *c < 1 || *c > 100000) {
          return InvalidArgumentError("hardware: '" + item +
                                      "': expected type:count with count >= 1");
        }
        count = static_cast<int>(*c);
      }
      mix.emplace_back(*h, count);
    }
    if (mix.size() > 1 || mix[0].second > 0) {
      workers = 0;
      for (const auto& [hw, count] : mix) {
        if (count == 0)
          return InvalidArgumentError("hardware: a mix needs type:count for every type");
        workers += count;
      }
    }
    d.hardware = mix[0].first;
  }
  if (workers < 1 || workers > 100000) {
    return InvalidArgumentError("workers: must be between 1 and 100000 (got " +
                                std::to_string(workers) + ")");
  }
  d.slo = spec.slo.count() > 0 ? spec.slo : suite.tasks()[d.task].default_slo;
  if (d.slo <= Duration(0)) return InvalidArgumentError("slo_ms: must be positive");
  if (d.slo > Seconds(3600)) return InvalidArgumentError("slo_ms: more than an hour is not an SLO");

  // An SLO that no variant can meet even alone at batch 1, on any hardware type of the
  // deployment (a mix: its fastest type), is a configuration error.
  std::vector<HardwareId> present;
  for (const auto& [hw, count] : mix) present.push_back(hw);
  if (present.empty()) present.push_back(d.hardware);
  Duration fastest = Duration::max();
  std::string fastest_name;
  HardwareId fastest_hw = d.hardware;
  for (HardwareId hw : present) {
    for (VariantId v : suite.VariantsOfTask(d.task)) {
      const LatencyDistribution* l = suite.Latency(hw, v, 1);
      if (!l) continue;
      Duration q = l->Quantile(spec.slo_check_quantile);
      if (q < fastest) {
        fastest = q;
        fastest_name = suite.variants()[v].name;
        fastest_hw = hw;
      }
    }
  }
  if (fastest == Duration::max()) {
    return FailedPreconditionError(
        "task '" + suite.tasks()[d.task].name + "' has no profiled variant on hardware '" +
        (spec.hardware.empty() ? suite.hardware()[d.hardware].name : spec.hardware) + "'");
  }
  if (fastest > d.slo) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "slo_ms: impossible SLO %.3f ms: the fastest variant (%s) takes %.3f ms at "
                  "batch 1 on %s",
                  ToMillis(d.slo), fastest_name.c_str(), ToMillis(fastest),
                  suite.hardware()[fastest_hw].name.c_str());
    return InvalidArgumentError(buf);
  }
  d.fastest = fastest;
  d.fastest_variant = fastest_name;
  d.fastest_hardware = suite.hardware()[fastest_hw].name;
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
  // Workers in mix order; a single type fills all of them.
  std::vector<HardwareId> types;
  if (mix.size() > 1 || (!mix.empty() && mix[0].second > 0)) {
    for (const auto& [hw, count] : mix) types.insert(types.end(), static_cast<size_t>(count), hw);
  } else {
    types.assign(static_cast<size_t>(workers), d.hardware);
  }
  // Machines of workers_per_machine consecutive workers of one type: a machine is one
  // hardware type (its memory), so a type's last machine may hold fewer.
  size_t machine = 0;
  int on_machine = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0 && (on_machine == spec.workers_per_machine || types[i] != types[i - 1])) {
      ++machine;
      on_machine = 0;
    }
    ++on_machine;
    WorkerSpec w;
    w.name = "w" + std::to_string(i);
    w.hardware = types[i];
    w.preload = preload;
    w.preload_none = none;
    if (spec.workers_per_machine > 1) w.machine = "m" + std::to_string(machine);
    d.workers.push_back(std::move(w));
  }
  return d;
}

}  // namespace sloserve
