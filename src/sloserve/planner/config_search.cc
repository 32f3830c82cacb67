#include "sloserve/planner/config_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "sloserve/core/rng.h"

namespace sloserve {
namespace {

size_t UniformIndex(Rng& rng, size_t n) {
  return std::min(n - 1, static_cast<size_t>(Uniform01(rng) * static_cast<double>(n)));
}

// Bookkeeping shared by every search: which configurations are still open (neither
// evaluated nor pruned), the evaluation log, sub-configuration pruning and the stop rule.
class SearchState {
 public:
  SearchState(const std::vector<InstanceCounts>& configs, const ConfigEvaluator& evaluate,
              const SearchOptions& options, std::string method)
      : configs_(configs),
        evaluate_(evaluate),
        options_(options),
        open_(configs.size(), true),
        evaluated_(configs.size(), false),
        value_(configs.size(), 0.0),
        open_count_(configs.size()) {
    result_.method = std::move(method);
    for (size_t i = 0; i < configs.size(); ++i) index_.emplace(configs[i], i);
  }

  bool Open(size_t i) const { return open_[i]; }
  bool Evaluated(size_t i) const { return evaluated_[i]; }
  double Value(size_t i) const { return value_[i]; }
  double best_value() const { return result_.best_value; }
  size_t size() const { return configs_.size(); }
  const InstanceCounts& counts(size_t i) const { return configs_[i]; }
  std::optional<size_t> Find(const InstanceCounts& c) const {
    auto it = index_.find(c);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  bool Finished() const {
    if (open_count_ == 0) return true;
    if (options_.max_evaluations > 0 &&
        static_cast<int64_t>(result_.evaluations.size()) >= options_.max_evaluations)
      return true;
    return !result_.evaluations.empty() && result_.best_value >= options_.stop_at;
  }

  // Evaluates an open configuration (a closed evaluated one returns its value, free).
  StatusOr<double> Evaluate(size_t i) {
    if (evaluated_[i]) return value_[i];
    ASSIGN_OR_RETURN(double v, evaluate_(configs_[i]));
    Close(i);
    evaluated_[i] = true;
    value_[i] = v;
    result_.evaluations.push_back({configs_[i], v});
    if (result_.evaluations.size() == 1 || v > result_.best_value) {
      result_.best_value = v;
      result_.best = configs_[i];
    }
    if (options_.prune_subconfigs) {
      for (size_t j = 0; j < configs_.size(); ++j) {
        if (open_[j] && IsSubConfig(configs_[j], configs_[i])) Prune(j);
      }
    }
    return v;
  }

  void Prune(size_t i) {
    if (!open_[i]) return;
    Close(i);
    ++result_.pruned;
  }

  // A uniformly random open configuration; requires open_count() > 0.
  size_t RandomOpen(Rng& rng) const {
    size_t k = UniformIndex(rng, open_count_);
    for (size_t i = 0; i < open_.size(); ++i) {
      if (open_[i] && k-- == 0) return i;
    }
    return 0;
  }
  size_t open_count() const { return open_count_; }
  SearchResult Take() { return std::move(result_); }

 private:
  void Close(size_t i) {
    if (open_[i]) {
      open_[i] = false;
      --open_count_;
    }
  }

  const std::vector<InstanceCounts>& configs_;
  const ConfigEvaluator& evaluate_;
  SearchOptions options_;
  std::map<InstanceCounts, size_t> index_;
  std::vector<bool> open_, evaluated_;
  std::vector<double> value_;
  size_t open_count_;
  SearchResult result_;
};

// Clamps counts to the space's per-type limits and removes instances (randomly chosen
// types) until the budget holds. Returns false if nothing valid is left.
bool Repair(const ConfigSpace& space, Rng& rng, InstanceCounts* c) {
  for (size_t t = 0; t < c->size(); ++t)
    (*c)[t] = std::clamp((*c)[t], space.min_count[t], space.max_count[t]);
  while (space.Cost(*c) > space.budget + 1e-9) {
    std::vector<size_t> reducible;
    for (size_t t = 0; t < c->size(); ++t)
      if ((*c)[t] > space.min_count[t]) reducible.push_back(t);
    if (reducible.empty()) return false;
    --(*c)[reducible[UniformIndex(rng, reducible.size())]];
  }
  return space.Contains(*c);
}

Status CheckInputs(const std::vector<InstanceCounts>& configs) {
  if (configs.empty()) return InvalidArgumentError("search: the configuration space is empty");
  return OkStatus();
}

}  // namespace

size_t SearchResult::EvaluationsToReach(double target) const {
  for (size_t i = 0; i < evaluations.size(); ++i) {
    if (evaluations[i].value >= target) return i + 1;
  }
  return 0;
}

StatusOr<SearchResult> KairosPlusSearch(const std::vector<InstanceCounts>& configs,
                                        const std::vector<double>& bounds,
                                        const ConfigEvaluator& evaluate,
                                        const SearchOptions& options) {
  RETURN_IF_ERROR(CheckInputs(configs));
  if (bounds.size() != configs.size())
    return InvalidArgumentError("kairos+: one upper bound per configuration expected");
  std::vector<size_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bounds[a] > bounds[b]; });
  SearchState s(configs, evaluate, options, "kairos+");
  for (size_t i : order) {
    if (s.Finished()) break;
    if (!s.Open(i)) continue;
    RETURN_IF_ERROR(s.Evaluate(i).status());
    // Upper-bound pruning: nothing whose bound is below the best so far can beat it.
    for (size_t j = 0; j < configs.size(); ++j) {
      if (s.Open(j) && bounds[j] < s.best_value()) s.Prune(j);
    }
  }
  return s.Take();
}

StatusOr<SearchResult> RandomSearch(const std::vector<InstanceCounts>& configs,
                                    const ConfigEvaluator& evaluate, const SearchOptions& options) {
  RETURN_IF_ERROR(CheckInputs(configs));
  Rng rng = MakeRng(options.seed, "config-search/random");
  SearchState s(configs, evaluate, options, "random");
  while (!s.Finished()) {
    RETURN_IF_ERROR(s.Evaluate(s.RandomOpen(rng)).status());
  }
  return s.Take();
}

StatusOr<SearchResult> GeneticSearch(const ConfigSpace& space,
                                     const std::vector<InstanceCounts>& configs,
                                     const ConfigEvaluator& evaluate,
                                     const SearchOptions& options) {
  RETURN_IF_ERROR(CheckInputs(configs));
  constexpr size_t kPopulation = 8;
  constexpr int kTournament = 2;
  constexpr double kMutation = 0.5;
  constexpr int kTries = 20;  // offspring attempts before falling back to a random open one
  Rng rng = MakeRng(options.seed, "config-search/genetic");
  SearchState s(configs, evaluate, options, "genetic");
  std::vector<size_t> evaluated;  // indices, the population is the best kPopulation
  for (size_t k = 0; k < kPopulation && !s.Finished(); ++k) {
    const size_t i = s.RandomOpen(rng);
    RETURN_IF_ERROR(s.Evaluate(i).status());
    evaluated.push_back(i);
  }
  while (!s.Finished()) {
    std::sort(evaluated.begin(), evaluated.end(),
              [&](size_t a, size_t b) { return s.Value(a) > s.Value(b); });
    const size_t pop = std::min(kPopulation, evaluated.size());
    auto pick_parent = [&] {
      size_t best = evaluated[UniformIndex(rng, pop)];
      for (int t = 1; t < kTournament; ++t) {
        const size_t c = evaluated[UniformIndex(rng, pop)];
        if (s.Value(c) > s.Value(best)) best = c;
      }
      return best;
    };
    std::optional<size_t> next;
    for (int attempt = 0; attempt < kTries && !next; ++attempt) {
      const InstanceCounts& a = s.counts(pick_parent());
      const InstanceCounts& b = s.counts(pick_parent());
      InstanceCounts child(a.size());
      for (size_t t = 0; t < a.size(); ++t) child[t] = Uniform01(rng) < 0.5 ? a[t] : b[t];
      if (Uniform01(rng) < kMutation) child[UniformIndex(rng, child.size())] += rng() & 1 ? 1 : -1;
      if (!Repair(space, rng, &child)) continue;
      auto idx = s.Find(child);
      if (idx && s.Open(*idx)) next = idx;
    }
    const size_t i = next ? *next : s.RandomOpen(rng);
    RETURN_IF_ERROR(s.Evaluate(i).status());
    evaluated.push_back(i);
  }
  return s.Take();
}

StatusOr<SearchResult> AnnealingSearch(const std::vector<InstanceCounts>& configs,
                                       const ConfigEvaluator& evaluate,
                                       const SearchOptions& options) {
  RETURN_IF_ERROR(CheckInputs(configs));
  constexpr double kStartTemperature = 0.2;  // relative loss accepted with prob 1/e at start
  constexpr double kCooling = 0.9;
  constexpr int kStuck = 50;  // proposals without a new evaluation before a restart
  Rng rng = MakeRng(options.seed, "config-search/annealing");
  SearchState s(configs, evaluate, options, "annealing");
  size_t current = s.RandomOpen(rng);
  ASSIGN_OR_RETURN(double current_value, s.Evaluate(current));
  double temperature = kStartTemperature;
  int stuck = 0;
  while (!s.Finished()) {
    if (stuck >= kStuck) {  // the neighbourhood is used up: restart elsewhere
      current = s.RandomOpen(rng);
      ASSIGN_OR_RETURN(current_value, s.Evaluate(current));
      temperature = kStartTemperature;
      stuck = 0;
      continue;
    }
    InstanceCounts next = s.counts(current);
    const size_t t = UniformIndex(rng, next.size());
    if (rng() & 1) {
      next[t] += rng() & 1 ? 1 : -1;
    } else {  // move one instance from type t to another type
      --next[t];
      ++next[UniformIndex(rng, next.size())];
    }
    auto idx = s.Find(next);
    if (!idx || (!s.Open(*idx) && !s.Evaluated(*idx))) {
      ++stuck;
      continue;
    }
    const bool fresh = s.Open(*idx);
    ASSIGN_OR_RETURN(double v, s.Evaluate(*idx));
    stuck = fresh ? 0 : stuck + 1;
    const double scale = std::max(current_value, 1e-9);
    if (v >= current_value ||
        Uniform01(rng) < std::exp((v - current_value) / scale / temperature)) {
      current = *idx;
      current_value = v;
    }
    temperature *= kCooling;
  }
  return s.Take();
}

const std::vector<std::string>& ConfigSearchMethods() {
  static const std::vector<std::string> kMethods = {"kairos+", "random", "genetic", "annealing"};
  return kMethods;
}

StatusOr<SearchResult> RunConfigSearch(const std::string& method, const ConfigSpace& space,
                                       const std::vector<InstanceCounts>& configs,
                                       const std::vector<double>& bounds,
                                       const ConfigEvaluator& evaluate,
                                       const SearchOptions& options) {
  if (method == "kairos+") return KairosPlusSearch(configs, bounds, evaluate, options);
  if (method == "random") return RandomSearch(configs, evaluate, options);
  if (method == "genetic") return GeneticSearch(space, configs, evaluate, options);
  if (method == "annealing") return AnnealingSearch(configs, evaluate, options);
  return InvalidArgumentError("unknown search method '" + method +
                              "' (kairos+, random, genetic, annealing)");
}

}  // namespace sloserve
