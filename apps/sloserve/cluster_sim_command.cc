#include "cluster_sim_command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sloserve/cluster/cluster_experiment.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/core/declared_key.h"

namespace sloserve::cli {
namespace {

double Finite(double x) {
  return std::isinf(x) ? -1 : x;
}

}  // namespace

Status RunClusterSim(const std::string& path, const std::string& text,
                     const std::vector<std::string>& sets, bool json, const std::string& records) {
  ASSIGN_OR_RETURN(ClusterExperiment exp, RunClusterExperiment(text, path, sets));
  if (!records.empty()) {
    std::ofstream out(records);
    if (!out) return UnavailableError("--records: cannot write " + records);
    out << "policy,point,id,model,machine,proxy,cold,refused,arrival_s,spawn_s,exit_s,latency_s,"
           "est_colocation_s,est_queue_s,est_registry_s,chosen\n";
    for (const ClusterRow& row : exp.rows) {
      std::string point;
      for (const auto& [k, v] : row.point) point += (point.empty() ? "" : ";") + k + "=" + v;
      for (const ClusterRequestRecord& r : row.first_run.records) {
        out << row.policy << ',' << point << ',' << r.id << ',' << r.model << ',' << r.machine
            << ',' << r.proxy << ',' << r.cold << ',' << r.refused << ',' << r.arrival_s << ','
            << r.spawn_s << ',' << r.exit_s << ',' << r.latency_s() << ','
            << Finite(r.estimates.colocation) << ',' << Finite(r.estimates.queue) << ','
            << Finite(r.estimates.registry) << ',' << ClusterPolicyName(r.chosen) << '\n';
      }
    }
  }
  if (json) {
    nlohmann::json j;
    j["experiment"] = exp.name;
    j["rows"] = nlohmann::json::array();
    for (const ClusterRow& row : exp.rows) {
      nlohmann::json r;
      r["policy"] = row.policy;
      for (const auto& [k, v] : row.point) {
        // Numbers stay numbers, so `sloserve report` can plot against them.
        if (const std::optional<double> x = ParseNumber(v)) {
          r[k] = *x;
        } else {
          r[k] = v;
        }
      }
      r["runs"] = row.runs;
      r["requests"] = row.requests;
      r["refused"] = row.refused;
      r["cold_starts"] = row.cold_starts;
      r["cold_starts_min"] = row.cold_starts_min;
      r["cold_starts_max"] = row.cold_starts_max;
      r["prefetch_loads"] = row.prefetch_loads;
      r["evictions"] = row.evictions;
      r["makespan_s"] = row.makespan_s;
      r["mean_latency_s"] = row.mean_latency_s;
      r["p50_latency_s"] = row.p50_latency_s;
      r["p99_latency_s"] = row.p99_latency_s;
      if (row.policy == "adaptive" || row.policy == "prefetch") {
        r["chose_colocation"] = row.chose_colocation;
        r["chose_queue"] = row.chose_queue;
        r["chose_registry"] = row.chose_registry;
      }
      if (row.break_even_requests >= 0) r["break_even_requests"] = row.break_even_requests;
      j["rows"].push_back(r);
    }
    std::cout << j.dump(2) << std::endl;
    return OkStatus();
  }
  if (!exp.name.empty()) std::cout << exp.name << "\n";
  std::printf("%-18s %-26s %5s %9s %11s %10s %10s %10s %9s %s\n", "policy", "point", "reqs", "cold",
              "makespan_s", "mean_s", "p99_s", "evictions", "prefetch", "note");
  for (const ClusterRow& row : exp.rows) {
    std::string point;
    for (const auto& [k, v] : row.point) point += (point.empty() ? "" : " ") + k + "=" + v;
    std::string note;
    if (row.policy == "adaptive" || row.policy == "prefetch") {
      note = "chose coloc/queue/registry " + std::to_string(row.chose_colocation) + "/" +
             std::to_string(row.chose_queue) + "/" + std::to_string(row.chose_registry);
    }
    if (row.break_even_requests >= 0)
      note += "break-even at " + std::to_string(row.break_even_requests);
    if (row.refused > 0) note += " refused " + std::to_string(row.refused);
    std::printf("%-18s %-26s %5d %9.2f %11.2f %10.3f %10.3f %10.1f %9.1f %s\n", row.policy.c_str(),
                point.empty() ? "-" : point.c_str(), row.requests, row.cold_starts, row.makespan_s,
                row.mean_latency_s, row.p99_latency_s, row.evictions, row.prefetch_loads,
                note.c_str());
  }
  return OkStatus();
}

}  // namespace sloserve::cli
