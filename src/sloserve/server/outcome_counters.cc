#include "sloserve/server/outcome_counters.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <tuple>

#include "sloserve/server/prometheus_text.h"

namespace sloserve {
namespace outcome_counters_internal {

constexpr auto kRelaxed = std::memory_order_relaxed;

}  // namespace outcome_counters_internal
namespace oc = outcome_counters_internal;

const OutcomeCounters::Row OutcomeCounters::kRows[14] = {
    {"met", "none"},
    {"late", "late"},
    {"dropped", "policy"},
    {"dropped", "queue_full"},
    {"dropped", "shed"},
    {"dropped", "expired"},
    {"dropped", "executor_error"},
    {"dropped", "cancelled"},
    {"dropped", "shutdown"},
    {"dropped", "unservable"},
    {"dropped", "internal"},
    {"error", "unavailable"},
    {"error", "other"},
    {"invalid", "bad_request"},
};

struct OutcomeCounters::Key {
  Key(size_t m, std::string_view v, size_t c, uint64_t h, bool all)
      : model(m), variant(v), slo_class(c), hash(h), all_rows(all) {}
  const size_t model;
  const std::string variant;  // "none": no variant answered
  const size_t slo_class;
  const uint64_t hash;
  const bool all_rows;  // the overflow: every row; else met/late or the others
  std::array<std::atomic<int64_t>, kRowCount> rows{};
};

OutcomeCounters::OutcomeCounters(std::vector<std::string> models,
                                 const std::vector<Duration>& default_slos,
                                 const std::vector<std::vector<std::string>>& variants)
    : models_(std::move(models)) {
  size_t declared = 0;
  for (size_t m = 0; m < models_.size(); ++m)
    declared += 1 + (m < variants.size() ? variants[m].size() : 0);
  while (max_keys_ < 4 * declared) max_keys_ *= 2;
  mask_ = 2 * max_keys_ - 1;
  table_ = std::make_unique<std::atomic<Key*>[]>(2 * max_keys_);
  for (size_t i = 0; i <= mask_; ++i) table_[i].store(nullptr, std::memory_order_relaxed);
  for (size_t m = 0; m < models_.size(); ++m)
    overflow_.push_back(std::make_unique<Key>(m, "other", kOtherClass, 0, true));
  for (size_t m = 0; m < models_.size(); ++m) {
    const Duration slo = m < default_slos.size() ? default_slos[m] : Duration::zero();
    const size_t c = slo > Duration::zero() ? ClassOf(slo) : kNoClass;
    FindOrAdd(m, "none", c);
    if (m < variants.size()) {
      for (const std::string& v : variants[m]) FindOrAdd(m, v, c);
    }
  }
}

OutcomeCounters::~OutcomeCounters() {
  for (size_t i = 0; i <= mask_; ++i) delete table_[i].load();
}

size_t OutcomeCounters::ClassOf(Duration slo) {
  if (slo <= Duration::zero()) return kNoClass;
  const int64_t us = slo.count();
  for (size_t c = 0; c < kMaxSloClasses; ++c) {
    int64_t seen = class_us_[c].load(std::memory_order_acquire);
    if (seen == 0 && class_us_[c].compare_exchange_strong(seen, us, std::memory_order_acq_rel))
      return c;
    if (seen == us) return c;  // ours, or another thread claimed it with the same SLO
  }
  return kOtherClass;
}

std::string OutcomeCounters::ClassName(size_t c) const {
  if (c == kOtherClass) return "other";
  if (c >= kMaxSloClasses) return "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g",
                static_cast<double>(class_us_[c].load(oc::kRelaxed)) / 1000.0);
  return buf;
}

OutcomeCounters::Key* OutcomeCounters::FindOrAdd(size_t model, std::string_view variant,
                                                 size_t slo_class) {
  const uint64_t h = std::hash<std::string_view>{}(variant)*31 + slo_class * 1000003 + model;
  for (size_t probe = 0, i = h & mask_; probe <= mask_; ++probe, i = (i + 1) & mask_) {
    Key* k = table_[i].load(std::memory_order_acquire);
    if (k == nullptr) {
      if (keys_.fetch_add(1, oc::kRelaxed) >= max_keys_) {
        keys_.fetch_sub(1, oc::kRelaxed);
        return overflow_[model].get();
      }
      auto fresh = std::make_unique<Key>(model, variant, slo_class, h, false);
      if (table_[i].compare_exchange_strong(k, fresh.get(), std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
        return fresh.release();
      }
      keys_.fetch_sub(1, oc::kRelaxed);  // another thread filled the slot: compare it
    }
    if (k->hash == h && k->model == model && k->slo_class == slo_class && k->variant == variant)
      return k;
  }
  return overflow_[model].get();
}

void OutcomeCounters::Add(size_t model, size_t row, std::string_view variant, Duration slo) {
  if (model >= models_.size() || row >= kRowCount) return;
  Key* k = FindOrAdd(model, variant.empty() ? "none" : variant, ClassOf(slo));
  k->rows[row].fetch_add(1, oc::kRelaxed);
}

std::string OutcomeCounters::RenderPrometheus() const {
  std::vector<const Key*> keys;
  for (size_t i = 0; i <= mask_; ++i) {
    if (const Key* k = table_[i].load(std::memory_order_acquire)) keys.push_back(k);
  }
  for (const auto& k : overflow_) {
    bool used = false;
    for (const auto& r : k->rows) used = used || r.load(oc::kRelaxed) > 0;
    if (used) keys.push_back(k.get());
  }
  std::vector<std::tuple<size_t, std::string, std::string, const Key*>> sorted;
  sorted.reserve(keys.size());
  for (const Key* k : keys) sorted.emplace_back(k->model, k->variant, ClassName(k->slo_class), k);
  std::sort(sorted.begin(), sorted.end());
  std::string out =
      "# HELP sloserve_requests_total Inference requests by model, outcome, SLO-miss reason, "
      "answering variant (none: not answered) and SLO class (the request's SLO in ms).\n"
      "# TYPE sloserve_requests_total counter\n";
  for (const auto& [model, variant, slo_class, k] : sorted) {
    const bool answered = variant != "none";
    for (size_t r = 0; r < kRowCount; ++r) {
      const bool ok_row = r == kRowMet || r == kRowLate;
      if (!k->all_rows && ok_row != answered) continue;
      out += "sloserve_requests_total{model=\"";
      AppendPrometheusLabelValue(out, models_[model]);
      out += std::string("\",outcome=\"") + kRows[r].outcome + "\",reason=\"" + kRows[r].reason +
             "\",variant=\"";
      AppendPrometheusLabelValue(out, variant);
      out += "\",slo_class=\"" + slo_class + "\"} " +
             std::to_string(k->rows[r].load(oc::kRelaxed)) + "\n";
    }
  }
  return out;
}

}  // namespace sloserve
