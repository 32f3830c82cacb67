#include "sloserve/sim/config_evaluator.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "sloserve/core/declared_key.h"

namespace sloserve {

SimulatedConfigEvaluator::SimulatedConfigEvaluator(
    RunSpec base, const ProfileSuite& suite, ConfigSpace space, ThroughputSearchOptions options,
    std::function<double(const InstanceCounts&)> start_hint)
    : base_(std::move(base)),
      suite_(suite),
      space_(std::move(space)),
      options_(options),
      start_hint_(std::move(start_hint)) {}

StatusOr<double> SimulatedConfigEvaluator::Evaluate(const InstanceCounts& counts) {
  {
    MutexLock lock(mu_);
    auto it = cache_.find(counts);
    if (it != cache_.end()) return it->second;
  }
  if (!space_.Contains(counts)) {
    return InvalidArgumentError("configuration " + FormatCounts(counts) +
                                " is outside the search space");
  }
  RunSpec run = base_;
  run.hardware = FormatMix(space_, counts);
  run.labels["hardware"] = run.hardware;
  ThroughputSearchOptions o = options_;
  if (start_hint_) {
    const double hint = start_hint_(counts);
    if (hint > 0) o.start_qps = std::clamp(hint, o.min_qps, o.max_qps);
  }
  ASSIGN_OR_RETURN(ThroughputSearchResult r, FindAllowableThroughput(run, suite_, o));
  MutexLock lock(mu_);
  cache_[counts] = r.allowable_qps;
  ++simulated_;
  return r.allowable_qps;
}

Status SimulatedConfigEvaluator::EvaluateAll(const std::vector<InstanceCounts>& listed, int jobs,
                                             const std::function<void(size_t, size_t)>& progress) {
  // Each configuration once: a repeat handed to two threads at once was simulated twice
  // (the cache is filled when a simulation ends), so the count depended on --jobs.
  std::vector<InstanceCounts> configs;
  for (const InstanceCounts& c : listed) {
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  struct {
    Mutex mu;
    Status first GUARDED_BY(mu);
  } status;
  Mutex progress_mu;  // serialises the progress callbacks
  auto worker = [&] {
    for (size_t i = next++; i < configs.size(); i = next++) {
      StatusOr<double> v = Evaluate(configs[i]);
      if (!v.ok()) {
        MutexLock lock(status.mu);
        if (status.first.ok()) status.first = v.status().WithPrefix(FormatCounts(configs[i]));
        next = configs.size();  // stop handing out work
        return;
      }
      const size_t d = ++done;
      if (progress) {
        MutexLock lock(progress_mu);
        progress(d, configs.size());
      }
    }
  };
  std::vector<std::thread> threads;
  const int n = std::max(1, std::min<int>(jobs, static_cast<int>(configs.size())));
  for (int k = 0; k < n; ++k) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  MutexLock lock(status.mu);  // uncontended now; says to the analysis what it guards
  return status.first;
}

size_t SimulatedConfigEvaluator::simulated() const {
  MutexLock lock(mu_);
  return simulated_;
}

std::map<InstanceCounts, double> SimulatedConfigEvaluator::cache() const {
  MutexLock lock(mu_);
  return cache_;
}

std::string SimulatedConfigEvaluator::Fingerprint() const {
  std::ostringstream f;
  f << "suite=" << base_.suite << " task=" << base_.task << " policy=" << base_.policy.Label()
    << " slo_us=" << base_.slo.count() << " seed=" << base_.seed << " sizes=" << base_.sizes
    << " arrival=" << base_.arrival.kind << " horizon_us=" << base_.arrival.horizon.count()
    << " latency="
    << (base_.service.mode == ServiceTimeOptions::Mode::kSample
            ? std::string("sample")
            : "p" + std::to_string(base_.service.quantile * 100))
    << " time_scale=" << base_.service.time_scale << " quantile=" << options_.quantile
    << " tol=" << options_.rel_tol;
  for (const auto& [k, v] : base_.policy.options) f << " " << k << "=" << v;
  return f.str();
}

Status SimulatedConfigEvaluator::LoadCache(const std::string& path) {
  std::ifstream in(path);
  if (!in) return OkStatus();
  std::string line;
  if (!std::getline(in, line) || line != "# " + Fingerprint()) {
    return FailedPreconditionError(path + ": evaluation cache of another setting (first line '" +
                                   line + "', expected '# " + Fingerprint() +
                                   "'); delete it or pick another file");
  }
  std::map<InstanceCounts, double> loaded;
  int lineno = 1;
  const size_t types = space_.price.size();
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || lineno == 2) continue;  // line 2: the column header
    std::vector<std::string> fields;
    std::stringstream ls(line);
    for (std::string item; std::getline(ls, item, ',');) fields.push_back(item);
    InstanceCounts c;
    double v = -1;
    bool ok = fields.size() == types + 1;
    for (size_t k = 0; ok && k <= types; ++k) {
      const double x = ParseNumber(fields[k]).value_or(-1);
      ok = x >= 0;
      if (k < types) {
        c.push_back(static_cast<int>(x));
      } else {
        v = x;
      }
    }
    if (!ok) {
      return InvalidArgumentError(path + ":" + std::to_string(lineno) + ": expected " +
                                  std::to_string(types) + " instance counts and allowable_qps");
    }
    loaded[c] = v;
  }
  MutexLock lock(mu_);
  for (auto& [c, v] : loaded) cache_.emplace(c, v);
  return OkStatus();
}

Status SimulatedConfigEvaluator::SaveCache(const std::string& path) const {
  std::ofstream out(path);
  if (!out) return InvalidArgumentError("cannot write " + path);
  out << std::setprecision(17);  // values round-trip exactly
  out << "# " << Fingerprint() << "\n";
  for (const std::string& name : space_.names) out << name << ",";
  out << "allowable_qps\n";
  for (const auto& [c, v] : cache()) {
    for (int n : c) out << n << ",";
    out << v << "\n";
  }
  return out ? OkStatus() : InternalError("write failed: " + path);
}

}  // namespace sloserve
