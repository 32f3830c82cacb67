#pragma once
// Resolves a deployment described by names (task, hardware type, worker count, SLO)
// against a profile suite, with errors that name the bad field. Shared by sim and serve.
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/engine/engine.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

struct DeploymentSpec {
  std::string task;      // "" = the suite's first task
  std::string hardware;  // "" = the suite's first hardware type
  int workers = 1;
  Duration slo{};                   // 0 = the task's default SLO
  double slo_check_quantile = 0.5;  // the SLO must exceed this quantile of the fastest variant
  std::string preload = "all";      // resident at start: all | none | comma-separated variants
  // Consecutive workers of one type share a machine (its memory); a mix's types never do.
  int workers_per_machine = 1;
};

struct Deployment {
  TaskId task = 0;
  HardwareId hardware = 0;
  Duration slo{};
  std::vector<WorkerSpec> workers;
  // The fastest variant alone at batch 1 (slo_check_quantile of its latency) on the
  // deployment's fastest hardware type: an SLO below it is refused, in a config and per
  // request (docs/protocol.md).
  Duration fastest{};
  std::string fastest_variant;
  std::string fastest_hardware;
};

StatusOr<Deployment> ResolveDeployment(const ProfileSuite& suite, const DeploymentSpec& spec);

}  // namespace sloserve
