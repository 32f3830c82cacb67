#include "sloserve/profile/exec_time_model.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace sloserve {
namespace {

// Builds knots over the sorted unique points `u` from the left limit and the value of
// F at each point; a jump becomes two knots at the same x.
template <typename Left, typename Right>
void EmitKnots(const std::vector<double>& u, Left left, Right right, std::vector<double>* x,
               std::vector<double>* f) {
  for (double p : u) {
    double fl = std::clamp(left(p), 0.0, 1.0);
    double fr = std::clamp(right(p), 0.0, 1.0);
    if (!f->empty()) fl = std::max(fl, f->back());  // keep monotone under rounding
    fr = std::max(fr, fl);
    if (fr > fl) {
      x->push_back(p);
      f->push_back(fl);
    }
    x->push_back(p);
    f->push_back(fr);
  }
  if (!f->empty()) f->back() = 1.0;
}

}  // namespace

StatusOr<ExecCdf> ExecCdf::FromHistogram(double start_us, double width_us,
                                         const std::vector<double>& weights) {
  if (!(width_us > 0) || !std::isfinite(width_us))
    return InvalidArgumentError("exec histogram: bin width must be > 0");
  if (!(start_us >= 0) || !std::isfinite(start_us))
    return InvalidArgumentError("exec histogram: first bin start must be >= 0");
  double total = 0;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w))
      return InvalidArgumentError("exec histogram: weights must be finite and >= 0");
    total += w;
  }
  if (!(total > 0)) return InvalidArgumentError("exec histogram: no samples (all weights zero)");
  size_t lo = 0, hi = weights.size();
  while (weights[lo] == 0) ++lo;
  while (weights[hi - 1] == 0) --hi;
  std::vector<double> x, f;
  double cum = 0;
  x.push_back(start_us + static_cast<double>(lo) * width_us);
  f.push_back(0);
  for (size_t i = lo; i < hi; ++i) {
    cum += weights[i];
    x.push_back(start_us + static_cast<double>(i + 1) * width_us);
    f.push_back(cum / total);
  }
  f.back() = 1.0;
  return ExecCdf(std::move(x), std::move(f));
}

StatusOr<ExecCdf> ExecCdf::FromRecord(const ExecHistogram& h) {
  return FromHistogram(static_cast<double>(h.first_bin_start.count()),
                       static_cast<double>(h.bin_width.count()), h.weights);
}

StatusOr<ExecCdf> ExecCdf::FromSamples(const std::vector<double>& samples_us, int bins) {
  if (samples_us.empty()) return InvalidArgumentError("exec samples: no samples");
  if (bins < 1) return InvalidArgumentError("exec samples: bins must be >= 1");
  double lo = samples_us.front(), hi = lo;
  for (double s : samples_us) {
    if (!(s >= 0) || !std::isfinite(s))
      return InvalidArgumentError("exec samples: samples must be finite and >= 0");
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  if (hi == lo) return Constant(lo);
  const double width = (hi - lo) / bins;
  std::vector<double> w(static_cast<size_t>(bins), 0.0);
  for (double s : samples_us) {
    size_t i = std::min(static_cast<size_t>((s - lo) / width), w.size() - 1);
    w[i] += 1;
  }
  return FromHistogram(lo, width, w);
}

ExecCdf ExecCdf::Constant(double value_us) {
  return ExecCdf({value_us, value_us}, {0.0, 1.0});
}

double ExecCdf::Cdf(double us) const {
  if (x_.empty() || us < x_.front()) return 0;
  if (us >= x_.back()) return 1;
  size_t i = static_cast<size_t>(std::upper_bound(x_.begin(), x_.end(), us) - x_.begin()) - 1;
  const double dx = x_[i + 1] - x_[i];
  if (dx <= 0) return f_[i];
  return f_[i] + (f_[i + 1] - f_[i]) * (us - x_[i]) / dx;
}

// Left limit F(us-).
static double CdfLeft(const ExecCdf& c, double us) {
  const auto& x = c.knots();
  const auto& f = c.cdf_at_knots();
  if (x.empty() || us <= x.front()) return 0;
  if (us > x.back()) return 1;
  size_t j = static_cast<size_t>(std::lower_bound(x.begin(), x.end(), us) - x.begin());
  size_t i = j - 1;
  const double dx = x[j] - x[i];
  if (dx <= 0) return f[i];
  return f[i] + (f[j] - f[i]) * (us - x[i]) / dx;
}

double ExecCdf::Quantile(double q) const {
  if (x_.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  size_t i = static_cast<size_t>(std::lower_bound(f_.begin(), f_.end(), q) - f_.begin());
  if (i == 0) return x_.front();
  if (i >= f_.size()) return x_.back();
  const double df = f_[i] - f_[i - 1];
  if (df <= 0) return x_[i];
  return x_[i - 1] + (x_[i] - x_[i - 1]) * (q - f_[i - 1]) / df;
}

double ExecCdf::Mean() const {
  if (x_.empty()) return 0;
  double m = x_.front();
  for (size_t i = 0; i + 1 < x_.size(); ++i)
    m += (x_[i + 1] - x_[i]) * (1.0 - 0.5 * (f_[i] + f_[i + 1]));
  return m;
}

ExecCdf ExecCdf::Affine(double c0_us, double scale) const {
  std::vector<double> x = x_;
  for (double& v : x) v = c0_us + scale * v;
  return ExecCdf(std::move(x), f_);
}

StatusOr<ExecCdf> ExecCdf::Mixture(const std::vector<const ExecCdf*>& parts,
                                   const std::vector<double>& weights) {
  if (parts.empty() || parts.size() != weights.size())
    return InvalidArgumentError("exec mixture: need one weight per part");
  double total = 0;
  std::vector<double> u;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i] || parts[i]->empty()) return InvalidArgumentError("exec mixture: empty part");
    if (!(weights[i] > 0)) return InvalidArgumentError("exec mixture: weights must be > 0");
    total += weights[i];
    u.insert(u.end(), parts[i]->x_.begin(), parts[i]->x_.end());
  }
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  auto mix = [&](auto fn) {
    return [&, fn](double p) {
      double s = 0;
      for (size_t i = 0; i < parts.size(); ++i) s += weights[i] / total * fn(*parts[i], p);
      return s;
    };
  };
  std::vector<double> x, f;
  EmitKnots(u, mix([](const ExecCdf& c, double p) { return CdfLeft(c, p); }),
            mix([](const ExecCdf& c, double p) { return c.Cdf(p); }), &x, &f);
  return ExecCdf(std::move(x), std::move(f));
}

StatusOr<ExecCdf> ExecCdf::MaxOf(const std::vector<std::pair<const ExecCdf*, int>>& parts,
                                 int refine) {
  if (refine < 1) return InvalidArgumentError("exec max: refine must be >= 1");
  std::vector<double> knots;
  bool any = false;
  for (const auto& [c, k] : parts) {
    if (!c || c->empty()) return InvalidArgumentError("exec max: empty part");
    if (k < 0) return InvalidArgumentError("exec max: negative count");
    if (k == 0) continue;
    any = true;
    knots.insert(knots.end(), c->x_.begin(), c->x_.end());
  }
  if (!any) return InvalidArgumentError("exec max: no draws");
  std::sort(knots.begin(), knots.end());
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());
  // Below the largest minimum the product is 0: start the grid there.
  double start = knots.front();
  for (const auto& [c, k] : parts)
    if (k > 0) start = std::max(start, c->Min());
  std::vector<double> u;
  for (size_t i = 0; i < knots.size(); ++i) {
    if (knots[i] < start) continue;
    u.push_back(knots[i]);
    if (i + 1 < knots.size()) {
      for (int r = 1; r < refine; ++r)
        u.push_back(knots[i] + (knots[i + 1] - knots[i]) * r / static_cast<double>(refine));
    }
  }
  auto prod = [&](bool left) {
    return [&, left](double p) {
      double s = 1;
      for (const auto& [c, k] : parts) {
        if (k == 0) continue;
        s *= std::pow(left ? CdfLeft(*c, p) : c->Cdf(p), k);
      }
      return s;
    };
  };
  std::vector<double> x, f;
  EmitKnots(u, prod(true), prod(false), &x, &f);
  return ExecCdf(std::move(x), std::move(f));
}

StatusOr<BatchTimeModel> FitBatchTimeModel(const ProfileSuite& suite, HardwareId hw, VariantId v,
                                           double ref_us) {
  if (!(ref_us > 0)) return InvalidArgumentError("batch time fit: reference time must be > 0");
  const std::vector<int>& sizes = suite.BatchSizes(hw, v);
  if (sizes.empty()) return NotFoundError("batch time fit: no latency profile");
  std::vector<double> k, lat;
  for (int b : sizes) {
    const LatencyDistribution* d = suite.ServiceLatency(hw, v, b);
    if (!d || d->empty()) continue;
    k.push_back(b);
    lat.push_back(static_cast<double>(d->Quantile(0.5).count()));
  }
  if (k.empty()) return NotFoundError("batch time fit: no latency samples");
  BatchTimeModel m;
  if (k.size() == 1) {
    m.c0_us = 0;
    m.c1 = lat[0] / (k[0] * ref_us);
    return m;
  }
  double mk = 0, ml = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    mk += k[i];
    ml += lat[i];
  }
  mk /= static_cast<double>(k.size());
  ml /= static_cast<double>(k.size());
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    sxy += (k[i] - mk) * (lat[i] - ml);
    sxx += (k[i] - mk) * (k[i] - mk);
  }
  double slope = sxx > 0 ? sxy / sxx : 0;
  double intercept = ml - slope * mk;
  if (slope <= 0) {  // flat or decreasing profile: charge the mean per request
    slope = std::max(ml / std::max(mk, 1.0) * 1e-3, 1e-9);
  }
  m.c0_us = std::max(intercept, 0.0);
  m.c1 = slope / ref_us;
  return m;
}

ExecTimeTable ExecTimeTable::Build(const ProfileSuite& suite) {
  ExecTimeTable t;
  const size_t nv = suite.variants().size();
  t.per_app_.assign(nv, {});
  t.pooled_.assign(nv, ExecCdf());
  for (const ExecHistogram& h : suite.exec_histograms()) {
    auto it = std::find(t.apps_.begin(), t.apps_.end(), h.app);
    size_t app = static_cast<size_t>(it - t.apps_.begin());
    if (it == t.apps_.end()) t.apps_.push_back(h.app);
    if (h.variant >= nv) continue;
    StatusOr<ExecCdf> c = ExecCdf::FromRecord(h);
    if (!c.ok()) {
      t.warnings_.push_back("exec_hist (" + suite.variants()[h.variant].name + ", " + h.app +
                            "): " + c.status().message() + "; ignored");
      continue;
    }
    auto& row = t.per_app_[h.variant];
    if (row.size() <= app) row.resize(app + 1);
    row[app] = *std::move(c);
  }
  for (size_t v = 0; v < nv; ++v) t.RebuildPooled(static_cast<VariantId>(v));
  return t;
}

void ExecTimeTable::RebuildPooled(VariantId v) {
  std::vector<const ExecCdf*> parts;
  for (const ExecCdf& c : per_app_[v])
    if (!c.empty()) parts.push_back(&c);
  if (parts.empty()) return;
  std::vector<double> w(parts.size(), 1.0);
  StatusOr<ExecCdf> pooled = ExecCdf::Mixture(parts, w);
  if (pooled.ok()) pooled_[v] = *std::move(pooled);
}

Status ExecTimeTable::Replace(VariantId v, AppId app, ExecCdf c) {
  if (!ForApp(v, app)) return NotFoundError("exec table: no histogram to replace");
  if (c.empty()) return InvalidArgumentError("exec table: empty distribution");
  per_app_[v][app] = std::move(c);
  RebuildPooled(v);
  return OkStatus();
}

const ExecCdf* ExecTimeTable::ForApp(VariantId v, AppId app) const {
  if (v >= per_app_.size() || app >= per_app_[v].size()) return nullptr;
  const ExecCdf& c = per_app_[v][app];
  return c.empty() ? nullptr : &c;
}

const ExecCdf& ExecTimeTable::Pooled(VariantId v) const {
  static const ExecCdf kEmpty;
  return v < pooled_.size() ? pooled_[v] : kEmpty;
}

const ExecCdf& ExecTimeTable::ForAppOrPooled(VariantId v, AppId app, bool* unknown) const {
  const ExecCdf* c = ForApp(v, app);
  if (unknown) *unknown = (c == nullptr);
  return c ? *c : Pooled(v);
}

StatusOr<OnlineExecProfiler> OnlineExecProfiler::Create(OnlineProfilerOptions o) {
  if (o.sample_every < 1) return InvalidArgumentError("online profiler: sample_every must be >= 1");
  if (o.window.count() <= 0) return InvalidArgumentError("online profiler: window must be > 0");
  if (o.bins < 1) return InvalidArgumentError("online profiler: bins must be >= 1");
  if (o.min_samples < 1) return InvalidArgumentError("online profiler: min_samples must be >= 1");
  return OnlineExecProfiler(o);
}

void OnlineExecProfiler::Record(AppId app, Duration alone, TimePoint now) {
  if (!started_) {
    started_ = true;
    window_start_ = now;
  }
  if (seen_++ % static_cast<uint64_t>(options_.sample_every) != 0) return;
  if (alone.count() < 0) return;  // not a duration: ignored
  buffer_.push_back({app, static_cast<double>(alone.count())});
}

bool OnlineExecProfiler::Publish(size_t app) {
  StatusOr<ExecCdf> c = ExecCdf::FromSamples(current_[app], options_.bins);
  if (!c.ok()) return false;
  snapshot_[app] = *std::move(c);
  return true;
}

int OnlineExecProfiler::Refresh(TimePoint now) {
  for (const auto& [app, us] : buffer_) {
    if (current_.size() <= app) {
      current_.resize(static_cast<size_t>(app) + 1);
      snapshot_.resize(static_cast<size_t>(app) + 1);
    }
    current_[app].push_back(us);
  }
  buffer_.clear();
  const bool reset = started_ && now - window_start_ >= options_.window;
  int published = 0;
  for (size_t a = 0; a < current_.size(); ++a) {
    const bool enough = current_[a].size() >= static_cast<size_t>(options_.min_samples);
    if (enough && (reset || snapshot_[a].empty())) published += Publish(a) ? 1 : 0;
  }
  if (reset) {
    for (auto& v : current_) v.clear();
    window_start_ = now;
  }
  return published;
}

const ExecCdf* OnlineExecProfiler::Snapshot(AppId app) const {
  if (app >= snapshot_.size() || snapshot_[app].empty()) return nullptr;
  return &snapshot_[app];
}

}  // namespace sloserve
