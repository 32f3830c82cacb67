#include "sloserve/mdp/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sloserve::mdp {

std::vector<std::string> RamsisImageParetoVariants() {
  return {"shufflenet_v2_x0_5", "mobilenet_v3_large", "efficientnet_b0",
          "efficientnet_b2",    "efficientnet_b3",    "efficientnet_b4",
          "efficientnet_v2_s",  "efficientnet_v2_m",  "efficientnet_v2_l"};
}

StatusOr<ProfileSuite> MakeSyntheticParetoSuite(const ProfileSuite& base,
                                                const SyntheticSuiteOptions& options) {
  if (options.front.size() < 2)
    return InvalidArgumentError("synthetic suite: need >= 2 front variants");
  if (!(options.accuracy_step > 0))
    return InvalidArgumentError("synthetic suite: step must be > 0");
  if (options.samples < 2) return InvalidArgumentError("synthetic suite: samples must be >= 2");
  std::vector<VariantId> front;
  for (const std::string& name : options.front) {
    auto v = base.FindVariant(name);
    if (!v) return NotFoundError("synthetic suite: unknown variant '" + name + "'");
    front.push_back(*v);
  }
  const TaskId task = base.variants()[front.front()].task;
  for (VariantId v : front) {
    if (base.variants()[v].task != task) {
      return InvalidArgumentError("synthetic suite: front variants span several tasks");
    }
  }
  std::sort(front.begin(), front.end(), [&](VariantId a, VariantId b) {
    return base.variants()[a].accuracy < base.variants()[b].accuracy;
  });

  ProfileSuite out;
  out.set_name(base.name() + "-synthetic");
  out.set_provenance("synthetic Pareto interpolation of " + base.name() + " (RAMSIS appendix E); " +
                     base.provenance());
  for (const TaskSpec& t : base.tasks()) out.AddTask(t);
  for (const HardwareSpec& h : base.hardware()) out.AddHardware(h);

  auto copy_variant = [&](VariantId v) {
    const VariantId nv = out.AddVariant(base.variants()[v]);
    for (HardwareId hw = 0; hw < base.hardware().size(); ++hw) {
      for (int b : base.BatchSizes(hw, v)) {
        out.AddLatency(hw, nv, b, *base.Latency(hw, v, b));
      }
    }
  };
  for (size_t i = 0; i + 1 < front.size(); ++i) {
    const VariantId lo = front[i], hi = front[i + 1];
    const VariantSpec& slo = base.variants()[lo];
    const VariantSpec& shi = base.variants()[hi];
    copy_variant(lo);
    for (int k = 1;; ++k) {
      const double acc = slo.accuracy + k * options.accuracy_step;
      if (acc >= shi.accuracy - 1e-9) break;
      const double w = (acc - slo.accuracy) / (shi.accuracy - slo.accuracy);
      VariantSpec spec;
      char name[128];
      std::snprintf(name, sizeof(name), "synth_%s_%s_%.3f", slo.name.c_str(), shi.name.c_str(),
                    acc);
      spec.name = name;
      spec.task = task;
      spec.accuracy = acc;
      spec.memory_mb = (1 - w) * slo.memory_mb + w * shi.memory_mb;
      spec.load_time = Duration(
          static_cast<int64_t>(std::llround((1 - w) * static_cast<double>(slo.load_time.count()) +
                                            w * static_cast<double>(shi.load_time.count()))));
      const VariantId nv = out.AddVariant(spec);
      for (HardwareId hw = 0; hw < base.hardware().size(); ++hw) {
        const int maxb = std::min(base.MaxBatch(hw, lo), base.MaxBatch(hw, hi));
        if (base.BatchSizes(hw, lo).empty() || base.BatchSizes(hw, hi).empty()) continue;
        for (int b : base.BatchSizes(hw, lo)) {
          if (b > maxb) break;
          const LatencyDistribution* a = base.Latency(hw, lo, b);
          const LatencyDistribution* c = base.Latency(hw, hi, b);
          if (a == nullptr || c == nullptr) continue;
          std::vector<int64_t> samples;
          for (int s = 0; s < options.samples; ++s) {
            const double q = static_cast<double>(s) / (options.samples - 1);
            samples.push_back(std::llround((1 - w) * static_cast<double>(a->Quantile(q).count()) +
                                           w * static_cast<double>(c->Quantile(q).count())));
          }
          out.AddLatency(hw, nv, b, LatencyDistribution(std::move(samples)));
        }
      }
    }
  }
  copy_variant(front.back());
  return out;
}

}  // namespace sloserve::mdp
