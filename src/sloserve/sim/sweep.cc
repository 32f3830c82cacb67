#include "sloserve/sim/sweep.h"

#include "sloserve/sim/suite_resolver.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace sloserve {

StatusOr<std::vector<RunResult>> RunSweep(
    const std::vector<RunSpec>& runs, int jobs,
    const std::function<void(const SweepProgress&)>& progress) {
  std::map<std::string, std::unique_ptr<ProfileSuite>> suites;
  for (const RunSpec& r : runs) {
    if (suites.count(r.suite)) continue;
    ASSIGN_OR_RETURN(ProfileSuite s, ResolveSuite(r.suite));
    suites[r.suite] = std::make_unique<ProfileSuite>(std::move(s));
  }
  std::vector<std::optional<StatusOr<RunResult>>> results(runs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards `fractions`, `done` and progress callbacks
  std::vector<double> fractions(runs.size(), 0.0);
  size_t done = 0;
  auto report = [&] {
    if (!progress) return;
    SweepProgress p;
    p.done = done;
    p.total = runs.size();
    double sum = 0;
    for (double f : fractions) sum += f;
    p.current_fraction = sum;
    progress(p);
  };
  auto worker = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= runs.size()) return;
      SimHooks hooks;
      hooks.on_progress = [&, i](double f) {
        std::lock_guard<std::mutex> lock(mu);
        fractions[i] = f;
        report();
      };
      auto r = RunSimulation(runs[i], *suites[runs[i].suite], hooks);
      std::lock_guard<std::mutex> lock(mu);
      results[i] = std::move(r);
      fractions[i] = 1.0;
      ++done;
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
