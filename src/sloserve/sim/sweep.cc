#include "sloserve/sim/sweep.h"

#include "sloserve/config/suite_resolver.h"
#include "sloserve/core/mutex.h"

#include <atomic>
#include <map>
#include <memory>
#include <thread>

namespace sloserve {

StatusOr<std::vector<RunResult>> RunSweep(
    const std::vector<RunSpec>& runs, int jobs,
    const std::function<void(const SweepProgress&)>& progress) {
  std::map<std::string, std::unique_ptr<ProfileSuite>> suites;
  // Keyed by suite and models: a multi-model run serves the suite composed from them.
  for (const RunSpec& r : runs) {
    const std::string key = RunSuiteKey(r);
    if (suites.count(key)) continue;
    ASSIGN_OR_RETURN(ProfileSuite s, ResolveRunSuite(r));
    suites[key] = std::make_unique<ProfileSuite>(std::move(s));
  }
  // Slot i is written by the one thread that took run i, and read after the join.
  std::vector<std::optional<StatusOr<RunResult>>> results(runs.size());
  std::atomic<size_t> next{0};
  struct {
    Mutex mu;  // also serialises the progress callbacks
    std::vector<double> fractions GUARDED_BY(mu);
    size_t done GUARDED_BY(mu) = 0;
  } shared;
  {
    MutexLock lock(shared.mu);
    shared.fractions.assign(runs.size(), 0.0);
  }
  auto report = [&]() REQUIRES(shared.mu) {
    if (!progress) return;
    SweepProgress p;
    p.done = shared.done;
    p.total = runs.size();
    double sum = 0;
    for (double f : shared.fractions) sum += f;
    p.current_fraction = sum;
    progress(p);
  };
  auto worker = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= runs.size()) return;
      SimHooks hooks;
      hooks.on_progress = [&, i](double f) {
        MutexLock lock(shared.mu);
        shared.fractions[i] = f;
        report();
      };
      auto r = RunSimulation(runs[i], *suites.at(RunSuiteKey(runs[i])), hooks);
      results[i] = std::move(r);
      MutexLock lock(shared.mu);
      shared.fractions[i] = 1.0;
      ++shared.done;
      report();
    }
  };
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(runs.size())));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  std::vector<RunResult> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!results[i]->ok()) return results[i]->status().WithPrefix("run " + std::to_string(i + 1));
    out.push_back(std::move(*results[i]).value());
  }
  return out;
}

}  // namespace sloserve
