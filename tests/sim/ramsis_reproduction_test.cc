// The RAMSIS paper's claims, asserted on a configuration no policy was tuned to: image
// task, 3 models (appendix E), 20 workers, SLO 150 ms, constant Poisson loads, seeds
// other than the ones used while developing. Accuracy per satisfied query counts only
// where the violation rate is under 5%, as the paper does.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "sloserve/mdp/policy.h"
#include "sloserve/sim/simulation.h"

namespace sloserve {
namespace {

const char* kVariants = "shufflenet_v2_x0_5,efficientnet_b2,efficientnet_v2_s";

const ProfileSuite& Image() {
  static const ProfileSuite* s = new ProfileSuite(LoadSuite("ramsis-image").value());
  return *s;
}

std::string CacheDir() {
  static const std::string dir = ::testing::TempDir() + "/sloserve-ramsis-test-cache";
  std::filesystem::create_directories(dir);
  return dir;
}

RunSpec Spec(double qps, const std::string& selection, uint64_t seed) {
  RunSpec spec;
  spec.suite = "ramsis-image";
  spec.task = "image";
  spec.workers = 20;
  spec.slo = Millis(150);
  spec.seed = seed;
  spec.arrival.kind = "poisson";
  spec.arrival.rate_qps = qps;
  spec.arrival.horizon = Seconds(20);
  spec.policy.selection = selection;
  spec.policy.batching = "edf";
  spec.policy.options["variants"] = kVariants;
  if (selection == "ramsis") {
    spec.policy.dispatch = "round_robin";
    spec.policy.options["d"] = "50";
    spec.policy.options["cache_dir"] = CacheDir();
  } else {
    spec.policy.dispatch = "shared";
  }
  if (selection == "model_switching") {
    spec.policy.options["table"] =
        std::string(SLOSERVE_SOURCE_DIR) + "/experiments/ramsis/tables/image_150ms.csv";
  }
  return spec;
}

TEST(RamsisReproductionTest, NeverLessAccurateThanTheBaselinesAndMarkedlyBetterMidRange) {
  double best_gain = 0;
  for (double qps : {200.0, 500.0, 800.0}) {
    auto ramsis = RunSimulation(Spec(qps, "ramsis", 31), Image());
    ASSERT_TRUE(ramsis.ok()) << ramsis.status().ToString();
    EXPECT_LT(ramsis->summary.violation_rate, 0.05) << qps;
    for (const char* baseline : {"jellyfish_plus", "model_switching"}) {
      auto b = RunSimulation(Spec(qps, baseline, 31), Image());
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      if (b->summary.violation_rate >= 0.05) continue;  // not comparable (paper's rule)
      EXPECT_GE(ramsis->summary.accuracy, b->summary.accuracy - 0.1)
          << baseline << " at " << qps << " qps";
      best_gain = std::max(best_gain, ramsis->summary.accuracy - b->summary.accuracy);
    }
  }
  EXPECT_GT(best_gain, 2.0) << "RAMSIS should be markedly more accurate somewhere mid-range";
}

const ProfileSuite& Text() {
  static const ProfileSuite* s = new ProfileSuite(LoadSuite("ramsis-text").value());
  return *s;
}

// Text: every BERT (non-monotone profiles: bert_mini meets the SLO only batched, bert_tiny
// is slower at batch 2 than at 1), 30 workers, SLO 200 ms, a seed and worker count no
// run was tuned on. Before per-batch Pareto pruning RAMSIS lost 1.4 points at 3,000 qps.
RunSpec RamsisTextSpec(double qps, const std::string& selection) {
  RunSpec spec = Spec(qps, selection, 41);
  spec.suite = "ramsis-text";
  spec.task = "text";
  spec.workers = 30;
  spec.slo = Millis(200);
  spec.policy.options.erase("variants");
  if (selection == "model_switching") {
    spec.policy.options["table"] =
        std::string(SLOSERVE_SOURCE_DIR) + "/experiments/ramsis/tables/text.csv";
  }
  return spec;
}

TEST(RamsisReproductionTest, NeverLessAccurateOnTheNonMonotoneTextProfiles) {
  for (double qps : {1500.0, 3000.0, 4500.0}) {
    auto ramsis = RunSimulation(RamsisTextSpec(qps, "ramsis"), Text());
    ASSERT_TRUE(ramsis.ok()) << ramsis.status().ToString();
    EXPECT_LT(ramsis->summary.violation_rate, 0.05) << qps;
    for (const char* baseline : {"jellyfish_plus", "model_switching"}) {
      auto b = RunSimulation(RamsisTextSpec(qps, baseline), Text());
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      if (b->summary.violation_rate >= 0.05) continue;
      EXPECT_GE(ramsis->summary.accuracy, b->summary.accuracy - 0.1)
          << baseline << " at " << qps << " qps";
    }
  }
}

TEST(RamsisReproductionTest, MdpExpectationTracksTheSimulation) {
  // One policy generated for exactly the offered load (section 7.3.1).
  const double qps = 500;
  mdp::MdpOptions o;
  o.task = "image";
  o.slo = Millis(150);
  o.workers = 20;
  o.load_qps = qps;
  o.discretization.d = 50;
  std::stringstream ss(kVariants);
  for (std::string v; std::getline(ss, v, ',');) o.variants.push_back(v);
  auto policy = mdp::GeneratePolicy(Image(), o);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  RunSpec spec = Spec(qps, "ramsis", 32);
  spec.arrival.horizon = Seconds(60);
  spec.policy.options["load_qps"] = std::to_string(qps);
  auto sim = RunSimulation(spec, Image());
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_NEAR(sim->summary.accuracy, policy->expected_accuracy(), 2.0);
  EXPECT_NEAR(sim->summary.violation_rate, policy->expected_violation(), 0.03);
}

}  // namespace
}  // namespace sloserve
