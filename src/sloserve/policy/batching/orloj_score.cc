#include "sloserve/policy/batching/orloj_score.h"

#include <algorithm>
#include <cmath>

namespace sloserve {

OrlojScoreTable::EntryData OrlojScoreTable::MakeEntry(const ExecCdf& batch, double mean_us,
                                                      const OrlojScoreOptions& o) {
  EntryData e;
  const double lo = batch.Min();
  double hi = batch.Max();
  int bins = o.bins;
  if (hi - lo < 1.0) {  // (nearly) a point mass: one bin one µs wide
    hi = lo + 1.0;
    bins = 1;
  }
  const double width = (hi - lo) / bins;
  e.edges.resize(static_cast<size_t>(bins) + 1);
  for (int i = 0; i <= bins; ++i) e.edges[static_cast<size_t>(i)] = lo + width * i;
  e.edges.back() = hi;
  e.top_us = hi;
  e.mass.resize(static_cast<size_t>(bins));
  double prev = 0;  // F(lo-) = 0: an atom at the minimum belongs to the first bin
  for (int i = 0; i < bins; ++i) {
    double f = (i + 1 == bins) ? 1.0 : batch.Cdf(e.edges[static_cast<size_t>(i) + 1]);
    e.mass[static_cast<size_t>(i)] = std::max(0.0, f - prev);
    prev = std::max(prev, f);
  }
  const double b_us = o.b_per_ms * 1e-3;
  e.prefix.assign(static_cast<size_t>(bins) + 1, 0.0);
  e.lower.resize(static_cast<size_t>(bins));
  // Eq. 2 integrates the bin's *density* h / (l2 - l1) against e^{-b (s - l)} (the
  // paper's "frequency"); bins of one entry share a width, entries of different apps don't.
  const double width_ms = width * 1e-3;
  for (double& m : e.mass) m /= width_ms;
  for (int i = 0; i < bins; ++i) {
    const size_t u = static_cast<size_t>(i);
    const double el1 = std::exp(b_us * (e.edges[u] - hi));
    const double el2 = std::exp(b_us * (e.edges[u + 1] - hi));
    e.prefix[u + 1] = e.prefix[u] + e.mass[u] * (el2 - el1);
    e.lower[u] = e.mass[u] * el1;
  }
  const double mean_ms = std::max(mean_us, 1.0) * 1e-3;
  e.k_factor = 1.0 / (mean_ms * o.b_per_ms);
  e.est_us = batch.Quantile(o.feasible_quantile);
  return e;
}

StatusOr<OrlojScoreTable> OrlojScoreTable::Build(const ProfileSuite& suite,
                                                 const ExecTimeTable& table, HardwareId hw,
                                                 VariantId v, const std::vector<int>& batch_sizes,
                                                 const OrlojScoreOptions& options) {
  if (batch_sizes.empty() || batch_sizes.front() < 1)
    return InvalidArgumentError("orloj: batch sizes must start at 1");
  OrlojScoreTable t;
  t.options_ = options;
  t.sizes_ = batch_sizes;
  t.dynamic_ = table.IsDynamic(v);
  const size_t nk = batch_sizes.size();
  t.mean_us_.resize(nk);
  if (!t.dynamic_) {
    t.num_slots_ = 1;
    for (size_t i = 0; i < nk; ++i) {
      const LatencyDistribution* d = suite.ServiceLatency(hw, v, batch_sizes[i]);
      if (!d || d->empty())
        return NotFoundError("orloj: no latency profile for batch size " +
                             std::to_string(batch_sizes[i]));
      std::vector<double> s;
      s.reserve(d->size());
      for (int64_t x : d->sorted_samples_us()) s.push_back(static_cast<double>(x));
      ASSIGN_OR_RETURN(ExecCdf c, ExecCdf::FromSamples(s, options.bins));
      t.mean_us_[i] = c.Mean();
      t.entries_.push_back(MakeEntry(c, t.mean_us_[i], options));
    }
    return t;
  }
  const ExecCdf& pooled = table.Pooled(v);
  ASSIGN_OR_RETURN(BatchTimeModel model, FitBatchTimeModel(suite, hw, v, pooled.Mean()));
  const size_t napps = table.apps().size();
  t.num_slots_ = static_cast<int>(napps) + 1;
  for (size_t i = 0; i < nk; ++i) {
    const int k = batch_sizes[i];
    ASSIGN_OR_RETURN(ExecCdf all, ExecCdf::MaxOf({{&pooled, k}}));
    t.mean_us_[i] = all.Affine(model.c0_us, model.c1 * k).Mean();
  }
  t.entries_.resize(static_cast<size_t>(t.num_slots_) * nk);
  for (size_t slot = 0; slot <= napps; ++slot) {
    const ExecCdf* own = slot < napps ? table.ForApp(v, static_cast<AppId>(slot)) : nullptr;
    if (!own) own = &pooled;
    for (size_t i = 0; i < nk; ++i) {
      const int k = batch_sizes[i];
      ASSIGN_OR_RETURN(ExecCdf mx, ExecCdf::MaxOf({{own, 1}, {&pooled, k - 1}}));
      t.entries_[slot * nk + i] =
          MakeEntry(mx.Affine(model.c0_us, model.c1 * k), t.mean_us_[i], options);
    }
  }
  t.has_app_.assign(napps, false);
  for (size_t a = 0; a < napps; ++a) t.has_app_[a] = table.ForApp(v, static_cast<AppId>(a));
  return t;
}

int OrlojScoreTable::SlotOf(AppId app, bool* unknown) const {
  if (!dynamic_) {
    if (unknown) *unknown = false;
    return 0;
  }
  const bool known = app < has_app_.size() && has_app_[app];
  if (unknown) *unknown = !known;
  return known ? static_cast<int>(app) : num_slots_ - 1;
}

int OrlojScoreTable::BinOf(int slot, int k, double s_us) const {
  const auto& edges = Entry(slot, k).edges;
  return static_cast<int>(std::upper_bound(edges.begin(), edges.end(), s_us) - edges.begin()) - 1;
}

void OrlojScoreTable::Line(int slot, int k, const int* j, TimePoint deadline, TimePoint base,
                           double* alpha, double* beta) const {
  const EntryData& e = Entry(slot, k);
  const int m = static_cast<int>(e.mass.size());
  const double b_us = options_.b_per_ms * 1e-3;
  double a = 0, c = 0;
  for (size_t s = 0; s < options_.steps.size(); ++s) {
    const int js = j[s];
    if (js < 0) continue;
    const CostStep& step = options_.steps[s];
    const double kf = e.k_factor * step.cost;
    double arel = e.prefix[static_cast<size_t>(js)];
    if (js < m) {
      arel -= e.lower[static_cast<size_t>(js)];
      c += kf * e.mass[static_cast<size_t>(js)];
    }
    const double d_rel =
        static_cast<double>((deadline - base).count()) + step.offset_ms * 1e3 - e.top_us;
    a += kf * arel * std::exp(-b_us * d_rel);
  }
  *alpha = a;
  *beta = c;
}

TimePoint OrlojScoreTable::NextMilestone(int slot, int k, int step, int j,
                                         TimePoint deadline) const {
  if (j < 0) return kTimeInfinite;
  const EntryData& e = Entry(slot, k);
  const double edge = e.edges[static_cast<size_t>(j)];
  const int64_t off =
      static_cast<int64_t>(std::llround(options_.steps[static_cast<size_t>(step)].offset_ms * 1e3));
  return deadline + Micros(off) - Micros(static_cast<int64_t>(std::ceil(edge))) + Micros(1);
}

}  // namespace sloserve
