#include "sloserve/mdp/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "sloserve/mdp/transitions.h"
#include "sloserve/profile/profile.h"

namespace sloserve::mdp {

namespace {

std::string Ms(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f ms", static_cast<double>(us) / 1000.0);
  return buf;
}

}  // namespace

StatusOr<std::vector<ModelVariant>> ResolveVariants(const ProfileSuite& suite, MdpOptions* o,
                                                    std::string* notes) {
  // Task.
  std::optional<TaskId> task;
  if (!o->task.empty()) {
    task = suite.FindTask(o->task);
    if (!task) return NotFoundError("unknown task '" + o->task + "' in suite " + suite.name());
  } else if (!o->variants.empty()) {
    auto v = suite.FindVariant(o->variants.front());
    if (!v) return NotFoundError("unknown variant '" + o->variants.front() + "'");
    task = suite.variants()[*v].task;
  } else if (suite.tasks().size() == 1) {
    task = 0;
  } else {
    return InvalidArgumentError("suite " + suite.name() + " has several tasks: name one");
  }
  o->task = suite.tasks()[*task].name;
  // Hardware.
  std::optional<HardwareId> hw;
  if (!o->hardware.empty()) {
    hw = suite.FindHardware(o->hardware);
    if (!hw) return NotFoundError("unknown hardware '" + o->hardware + "'");
  } else {
    if (suite.hardware().empty()) return NotFoundError("suite has no hardware types");
    hw = 0;
  }
  o->hardware = suite.hardware()[*hw].name;
  // Candidate variants.
  std::vector<VariantId> ids;
  const bool explicit_list = !o->variants.empty();
  if (explicit_list) {
    for (const std::string& name : o->variants) {
      auto v = suite.FindVariant(name);
      if (!v) return NotFoundError("unknown variant '" + name + "'");
      if (suite.variants()[*v].task != *task) {
        return InvalidArgumentError("variant '" + name + "' is not of task " + o->task);
      }
      ids.push_back(*v);
    }
  } else {
    ids = suite.VariantsOfTask(*task);
  }
  std::vector<ModelVariant> out;
  for (VariantId id : ids) {
    const VariantSpec& spec = suite.variants()[id];
    const int maxb = suite.MaxBatch(*hw, id);
    if (maxb <= 0 || suite.BatchSizes(*hw, id).empty()) {
      if (explicit_list) {
        return NotFoundError("variant '" + spec.name + "' has no latency profile on hardware " +
                             o->hardware);
      }
      *notes += "skipped " + spec.name + ": no latency profile on " + o->hardware + "\n";
      continue;
    }
    ModelVariant mv;
    mv.id = id;
    mv.name = spec.name;
    mv.accuracy = spec.accuracy;
    mv.max_batch = std::min(maxb, o->max_queue);
    for (int b = 1; b <= mv.max_batch; ++b) {
      const LatencyDistribution* d = suite.Latency(*hw, id, b);
      if (d == nullptr || d->empty()) {
        return InternalError("variant '" + spec.name + "': no latency at batch " +
                             std::to_string(b));
      }
      mv.latency_us.push_back(d->Quantile(o->latency_quantile).count());
    }
    out.push_back(std::move(mv));
  }
  if (out.empty()) {
    return NotFoundError("no variant of task " + o->task + " is profiled on " + o->hardware);
  }
  std::sort(out.begin(), out.end(), [](const ModelVariant& a, const ModelVariant& b) {
    if (a.Latency(1) != b.Latency(1)) return a.Latency(1) < b.Latency(1);
    return a.accuracy > b.accuracy;
  });
  const int64_t slo = o->slo.count();
  if (out.front().Latency(1) > slo) {
    return FailedPreconditionError("impossible SLO: no variant meets " + Ms(slo) +
                                   " even at batch 1 (fastest: " + out.front().name + " at " +
                                   Ms(out.front().Latency(1)) + ")");
  }
  // A variant is never valid when none of its batch sizes meets the SLO. Profiles need
  // not be monotone in the batch size (ramsis-text's bert_mini: p95 123 ms at batch 1,
  // 24-56 ms at batches 2-8), so every batch counts, not only batch 1.
  auto within_slo = [slo](const ModelVariant& v) {
    return std::any_of(v.latency_us.begin(), v.latency_us.end(),
                       [slo](int64_t l) { return l <= slo; });
  };
  // Pareto pruning over the actions (section 4.3.3): `u` dominates `v` when it is at
  // least as accurate, takes every batch size `v` takes and is at least as fast at each
  // (strictly better somewhere). Comparing batch-1 latencies only would drop variants
  // that are faster at larger batches (ramsis-image's shufflenet_v2_x1_5: 32 ms vs
  // mobilenet_v3_large's 31 ms at batch 1, but 75 vs 80 ms at batch 4), i.e. remove
  // actions that are optimal near capacity.
  auto dominates = [](const ModelVariant& u, const ModelVariant& v) {
    if (u.accuracy < v.accuracy || u.max_batch < v.max_batch) return false;
    bool strict = u.accuracy > v.accuracy;
    for (int b = 1; b <= v.max_batch; ++b) {
      if (u.Latency(b) > v.Latency(b)) return false;
      if (u.Latency(b) < v.Latency(b)) strict = true;
    }
    return strict;
  };
  std::vector<ModelVariant> kept;
  for (size_t i = 0; i < out.size(); ++i) {
    const ModelVariant& v = out[i];
    if (!within_slo(v)) {
      *notes += "dropped " + v.name +
                ": latency > SLO at every batch size (batch 1: " + Ms(v.Latency(1)) + ")\n";
      continue;
    }
    bool dominated = false;
    if (o->pareto_prune) {
      for (const ModelVariant& u : out) {
        if (&u == &v || !within_slo(u)) continue;
        if (dominates(u, v)) {
          dominated = true;
          *notes += "pruned " + v.name + ": dominated by " + u.name + "\n";
          break;
        }
      }
    }
    if (!dominated) kept.push_back(v);
  }
  return kept;
}

std::vector<std::string> MdpModel::VariantNames() const {
  std::vector<std::string> names;
  for (const ModelVariant& v : variants_) names.push_back(v.name);
  return names;
}

int MdpModel::QueueOf(int s) const {
  if (s == 0) return 0;
  if (s == full_state()) return n_;
  return 1 + (s - 1) / num_levels();
}

int MdpModel::LevelOfState(int s) const {
  if (s == 0 || s == full_state()) return 0;
  return (s - 1) % num_levels();
}

int MdpModel::LevelOf(Duration slack) const {
  auto it = std::upper_bound(levels_.begin(), levels_.end(), slack.count());
  if (it == levels_.begin()) return 0;
  return static_cast<int>(it - levels_.begin()) - 1;
}

double MdpModel::PeakWorkerQps() const {
  double best = 0;
  for (const ModelVariant& v : variants_) {
    for (int b = 1; b <= v.max_batch; ++b) {
      if (v.Latency(b) > 0) best = std::max(best, b * 1e6 / static_cast<double>(v.Latency(b)));
    }
  }
  return best;
}

ModelAction MdpModel::LateAction(int n) const {
  // The lowest latency at batch n among variants that can take n queries (profiles need
  // not be monotone in the batch size); if none can, the largest batch any can take.
  int best = -1;
  for (int vi = 0; vi < static_cast<int>(variants_.size()); ++vi) {
    const ModelVariant& v = variants_[vi];
    if (v.max_batch >= n && (best < 0 || v.Latency(n) < variants_[best].Latency(n))) best = vi;
  }
  if (best >= 0) return {best, n};
  for (int vi = 0; vi < static_cast<int>(variants_.size()); ++vi) {
    const ModelVariant& v = variants_[vi];
    if (best < 0 || v.max_batch > variants_[best].max_batch ||
        (v.max_batch == variants_[best].max_batch &&
         v.Latency(v.max_batch) < variants_[best].Latency(v.max_batch))) {
      best = vi;
    }
  }
  return {best, variants_[best].max_batch};
}

double MdpModel::SloCapacityQps() const {
  double best = 0;
  for (const ModelVariant& v : variants_) {
    for (int b = 1; b <= v.max_batch; ++b) {
      if (v.Latency(b) > 0 && v.Latency(b) <= options_.slo.count()) {
        best = std::max(best, b * 1e6 / static_cast<double>(v.Latency(b)));
      }
    }
  }
  return best;
}

StatusOr<MdpModel> MdpModel::Build(const ProfileSuite& suite, const MdpOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  MdpModel m;
  m.options_ = options;
  ASSIGN_OR_RETURN(m.variants_, ResolveVariants(suite, &m.options_, &m.notes_));
  m.n_ = options.max_queue;
  m.k_ = options.workers;
  const int64_t slo = options.slo.count();

  // Slack levels.
  std::set<int64_t> lv = {0, slo};
  if (options.discretization.kind == DiscretizationKind::kFixedLength) {
    const int d = options.discretization.d;
    for (int i = 1; i < d; ++i) {
      lv.insert(static_cast<int64_t>(std::llround(static_cast<double>(slo) * i / d)));
    }
  } else {
    for (const ModelVariant& v : m.variants_) {
      for (int64_t l : v.latency_us) {
        if (l >= 0 && l <= slo) lv.insert(l);
      }
    }
  }
  m.levels_.assign(lv.begin(), lv.end());
  const int nl = m.num_levels();
  // Each latency kernel holds workers x max_queue x levels probabilities.
  const double kernel_size = static_cast<double>(m.k_) * m.n_ * nl;
  if (kernel_size > 8e6) {
    return ResourceExhaustedError(
        "MDP too large: workers x max_queue x slack levels = " +
        std::to_string(static_cast<int64_t>(kernel_size)) +
        " > 8e6 per latency kernel; use fewer levels (FLD D) or a smaller max_queue");
  }

  ArrivalCounts counts(options.arrival, options.load_qps * 1e-6);
  TransitionContext ctx;
  ctx.n = m.n_;
  ctx.k = m.k_;
  ctx.slo_us = slo;
  ctx.levels = &m.levels_;
  ctx.counts = &counts;
  CountCdfCache cdf_cache;
  ctx.cache = &cdf_cache;
  std::vector<double> slack_table;
  ctx.scratch = &slack_table;

  // Phase weights per state (the full state behaves as (N, level 0)).
  m.phase_.assign(static_cast<size_t>(m.num_states()) * m.k_, 0.0);
  m.phase_[0] = 1.0;
  for (int n = 1; n <= m.n_; ++n) {
    for (int j = 0; j < nl; ++j) {
      PhaseWeights(ctx, n, slo - m.levels_[j],
                   &m.phase_[static_cast<size_t>(m.StateIndex(n, j)) * m.k_]);
    }
  }
  std::copy_n(m.phase_.begin() + static_cast<size_t>(m.StateIndex(m.n_, 0)) * m.k_, m.k_,
              m.phase_.begin() + static_cast<size_t>(m.full_state()) * m.k_);
  m.phase_band_.assign(static_cast<size_t>(m.num_states()) * 2, 0);
  for (int s = 0; s < m.num_states(); ++s) {
    const std::pair<int, int> band = AlignedBand(m.Phase(s), m.k_);
    m.phase_band_[2 * s] = band.first;
    m.phase_band_[2 * s + 1] = band.second;
  }

  // Valid pairs.
  std::map<int64_t, int> kernel_of;
  auto kernel_index = [&](int64_t tau) {
    auto it = kernel_of.find(tau);
    if (it != kernel_of.end()) return it->second;
    Kernel kn;
    kn.tau_us = tau;
    BuildCountKernel(ctx, &kn);
    m.kernels_.push_back(std::move(kn));
    kernel_of[tau] = static_cast<int>(m.kernels_.size()) - 1;
    return static_cast<int>(m.kernels_.size()) - 1;
  };
  m.pair_offset_.assign(m.num_states() + 1, 0);
  const bool variable = options.batching == BatchingKind::kVariable;
  for (int s = 0; s < m.num_states(); ++s) {
    m.pair_offset_[s] = static_cast<int>(m.pairs_.size());
    if (s == 0) continue;
    const int n = m.QueueOf(s);
    const int j = m.LevelOfState(s);
    const int64_t slack = s == m.full_state() ? 0 : m.levels_[j];
    const size_t first = m.pairs_.size();
    for (int vi = 0; vi < static_cast<int>(m.variants_.size()); ++vi) {
      const ModelVariant& v = m.variants_[vi];
      const int bmin = variable ? 1 : n;
      for (int b = bmin; b <= std::min(n, v.max_batch); ++b) {
        if (v.Latency(b) > slack) continue;
        Pair p;
        p.action = {vi, b};
        p.met = true;
        p.reward = v.accuracy * b;
        m.pairs_.push_back(p);
      }
    }
    if (m.pairs_.size() == first) {  // late rather than never: fastest, whole queue
      Pair p;
      p.action = m.LateAction(n);
      p.met = false;
      p.reward = 0;
      m.pairs_.push_back(p);
    }
    for (size_t i = first; i < m.pairs_.size(); ++i) {
      Pair& p = m.pairs_[i];
      p.kernel = kernel_index(m.variants_[p.action.variant].Latency(p.action.batch));
    }
  }
  m.pair_offset_[m.num_states()] = static_cast<int>(m.pairs_.size());

  // Transition tables: whole-queue pairs need the slack kernel, others a leftover row.
  for (int s = 1; s < m.num_states(); ++s) {
    const int n = m.QueueOf(s);
    const int j = m.LevelOfState(s);
    for (int i = m.pair_offset_[s]; i < m.pair_offset_[s + 1]; ++i) {
      Pair& p = m.pairs_[i];
      if (p.action.batch >= n) {
        BuildSlackKernel(ctx, &m.kernels_[p.kernel]);
      } else {
        m.leftovers_.push_back(
            BuildLeftover(ctx, m.kernels_[p.kernel], m.Phase(s), n, j, p.action.batch));
        p.leftover = static_cast<int>(m.leftovers_.size()) - 1;
      }
    }
  }
  return m;
}

std::vector<double> MdpModel::TransitionRow(int s, const Pair& p) const {
  std::vector<double> row(num_states(), 0.0);
  const int top = StateIndex(1, num_levels() - 1);
  if (s == 0) {
    row[top] = 1.0;
    return row;
  }
  if (p.leftover >= 0) {
    const Leftover& lo = leftovers_[p.leftover];
    for (int mm = 0; mm < static_cast<int>(lo.mdist.size()); ++mm) {
      for (int jj = 0; jj < static_cast<int>(lo.jdist.size()); ++jj) {
        row[StateIndex(lo.left + mm, lo.jlo + jj)] += lo.mdist[mm] * lo.jdist[jj];
      }
    }
    row[full_state()] += lo.full;
    return row;
  }
  const Kernel& kn = kernels_[p.kernel];
  const double* w = Phase(s);
  for (int x = 0; x < k_; ++x) {
    if (w[x] == 0) continue;
    row[top] += w[x] * kn.p0[x];
    row[full_state()] += w[x] * kn.full[x];
    for (int mm = 1; mm <= kn.nmax; ++mm) {
      const size_t r = static_cast<size_t>(x) * kn.nmax + (mm - 1);
      const int b = kn.band[2 * r];
      for (int jj = b; jj < kn.band[2 * r + 1]; ++jj) {
        row[StateIndex(mm, kn.jlo + jj)] += w[x] * kn.p[kn.offset[r] + (jj - b)];
      }
    }
  }
  return row;
}

}  // namespace sloserve::mdp
