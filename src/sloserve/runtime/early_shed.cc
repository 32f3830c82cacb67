#include "sloserve/runtime/early_shed.h"

#include <algorithm>

namespace sloserve {

std::vector<size_t> EarlyShed::SetSlos(const std::vector<Duration>& by_model) {
  std::vector<size_t> probes;
  probes.reserve(by_model.size());
  for (size_t t = 0; t < by_model.size(); ++t) {
    if (probes_.size() < kMaxSlos && by_model[t] > Duration::zero()) {
      probes.push_back(probes_.size());
      probes_.push_back(Probe{static_cast<TaskId>(t), by_model[t]});
    } else {
      probes.push_back(kNoProbe);
    }
  }
  return probes;
}

void EarlyShed::Publish(const WouldShed& would_shed, const MaxRowsAlone& max_rows, int32_t levels) {
  levels = std::clamp(levels, 1, kMaxPriorityLevels);
  for (size_t p = 0; p < probes_.size(); ++p) {
    max_rows_[p].store(max_rows(probes_[p].model, probes_[p].slo), std::memory_order_relaxed);
    for (int32_t level = 1; level <= levels; ++level) {
      const bool shed = would_shed(probes_[p].model, probes_[p].slo, level);
      shedding_[p][static_cast<size_t>(level)].store(shed, std::memory_order_relaxed);
    }
  }
}

bool EarlyShed::Refuse(int32_t level, size_t probe, bool probe_slo, int64_t rows) {
  if (!probe_slo || level < 1 || level > kMaxPriorityLevels || probe >= kMaxSlos) return false;
  if (rows < 1 || rows > max_rows_[probe].load(std::memory_order_relaxed)) return false;
  const auto l = static_cast<size_t>(level);
  if (!shedding_[probe][l].load(std::memory_order_relaxed)) return false;
  refused_[l].fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t EarlyShed::refused() const {
  int64_t n = 0;
  for (const auto& r : refused_) n += r.load(std::memory_order_relaxed);
  return n;
}

void EarlyShed::AddTo(MetricsSummary& m, std::vector<PriorityStats>& levels) const {
  const int64_t n = refused();
  if (n == 0) return;
  m.arrived += n;
  m.dropped += n;
  m.shed += n;
  m.admitted = m.arrived - m.shed;
  const auto arrived = static_cast<double>(m.arrived);
  m.violation_rate = static_cast<double>(m.late + m.dropped) / arrived;
  m.finish_rate = static_cast<double>(m.met) / arrived;
  int seen = 0;
  for (PriorityStats& p : levels) {
    if (p.level < 1 || p.level > kMaxPriorityLevels) continue;
    const int64_t r = refused_[static_cast<size_t>(p.level)].load(std::memory_order_relaxed);
    p.arrived += r;
    p.shed += r;
    if (p.arrived > 0) p.shed_rate = static_cast<double>(p.shed) / static_cast<double>(p.arrived);
    seen += p.arrived > 0;
  }
  m.priorities.clear();
  for (const PriorityStats& p : levels)
    if (seen > 1 && p.arrived > 0) m.priorities.push_back(p);
}

}  // namespace sloserve
