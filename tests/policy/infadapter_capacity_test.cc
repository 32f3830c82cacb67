// InfAdapter's capacity model: the least-squares line per variant checked by hand on
// resnet18 of the infadapter-resnet suite, the p99 feasibility per core count, the
// configurable fit points, bad options, and a table with gaps interpolated and noted.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "sloserve/infadapter/capacity.h"
#include "sloserve/profile/profile.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

const ProfileSuite& ResNets() {
  return testing::EmbeddedSuite("infadapter-resnet");
}

const InfAdapterVariantCapacity& Variant(const InfAdapterCapacityModel& m,
                                         const std::string& name) {
  for (const auto& v : m.variants) {
    if (v.name == name) return v;
  }
  ADD_FAILURE() << "no variant " << name;
  return m.variants.front();
}

TEST(InfAdapterCapacity, FitsResNet18ByHand) {
  auto model = BuildInfAdapterCapacity(ResNets());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->variants.size(), 5u);
  EXPECT_EQ(model->max_profiled_cores, 20);
  // Capacities at SLA 750 ms, cores 1, 2, 4, 8, 16: 19, 43, 90, 190, 385 rps.
  // mean x = 6.2, mean y = 145.4; Sxx = 148.8, Sxy = 3637.6.
  const InfAdapterVariantCapacity& r18 = Variant(*model, "resnet18");
  const double slope = 3637.6 / 148.8;           // 24.4462...
  const double intercept = 145.4 - 6.2 * slope;  // -6.1667
  EXPECT_NEAR(r18.fit.slope, slope, 1e-9);
  EXPECT_NEAR(r18.fit.intercept, intercept, 1e-9);
  EXPECT_EQ(r18.fit.points, 5);
  // Residuals fit - y: -0.7204, -0.2742, 1.6183, -0.5968, -0.0269.
  double sse = 0, max_rel = 0;
  const double xs[] = {1, 2, 4, 8, 16}, ys[] = {19, 43, 90, 190, 385};
  for (int i = 0; i < 5; ++i) {
    const double r = intercept + slope * xs[i] - ys[i];
    sse += r * r;
    max_rel = std::max(max_rel, std::abs(r) / ys[i]);
  }
  EXPECT_NEAR(r18.fit.rmse, std::sqrt(sse / 5), 1e-9);
  EXPECT_NEAR(r18.fit.rmse, 0.84497, 1e-5);
  EXPECT_NEAR(r18.fit.max_relative_error, max_rel, 1e-12);
  EXPECT_NEAR(r18.fit.max_relative_error, 0.72043 / 19, 1e-5);  // at 1 core
  // th(n) = 0.8 (a + b n).
  EXPECT_NEAR(r18.Throughput(20), 0.8 * (intercept + 20 * slope), 1e-9);
  EXPECT_NEAR(r18.Throughput(20), 386.2065, 1e-4);
  EXPECT_EQ(r18.Throughput(0), 0);
  EXPECT_EQ(r18.load_time, Millis(6440));
  EXPECT_DOUBLE_EQ(r18.accuracy, 69.758);
}

TEST(InfAdapterCapacity, P99DecidesFeasibility) {
  auto model = BuildInfAdapterCapacity(ResNets());
  ASSERT_TRUE(model.ok());
  const InfAdapterVariantCapacity& r152 = Variant(*model, "resnet152");
  // 1 core: no p99 at 750 ms; the suite's latency (p99 at 1500 ms) is 1260.66 ms.
  ASSERT_TRUE(r152.P99(1).has_value());
  EXPECT_EQ(*r152.P99(1), Micros(1260660));
  EXPECT_FALSE(r152.Feasible(1, model->slo));
  EXPECT_EQ(*r152.P99(2), Micros(391720));
  EXPECT_TRUE(r152.Feasible(2, model->slo));
  EXPECT_FALSE(r152.Feasible(21, model->slo));  // never profiled
  EXPECT_FALSE(r152.P99(0).has_value());
}

TEST(InfAdapterCapacity, FitPointsAreConfigurable) {
  InfAdapterCapacityOptions o;
  o.fit_cores = {1, 2};
  o.headroom = 1.0;
  auto model = BuildInfAdapterCapacity(ResNets(), o);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const InfAdapterVariantCapacity& r18 = Variant(*model, "resnet18");
  EXPECT_NEAR(r18.fit.slope, 24, 1e-9);  // (43 - 19) / 1
  EXPECT_NEAR(r18.fit.intercept, -5, 1e-9);
  EXPECT_NEAR(r18.fit.rmse, 0, 1e-9);
  EXPECT_NEAR(r18.Throughput(3), 67, 1e-9);
  // SLA 1000 ms records instead.
  o.slo = Millis(1000);
  ASSERT_TRUE(BuildInfAdapterCapacity(ResNets(), o).ok());
}

TEST(InfAdapterCapacity, BadOptionsNameTheField) {
  for (double h : {0.0, -0.5, 1.01, std::nan("")}) {
    InfAdapterCapacityOptions o;
    o.headroom = h;
    auto m = BuildInfAdapterCapacity(ResNets(), o);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(m.status().message().find("headroom"), std::string::npos) << m.status().ToString();
  }
  InfAdapterCapacityOptions o;
  o.fit_cores = {4, 4};
  auto m = BuildInfAdapterCapacity(ResNets(), o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("fit_cores"), std::string::npos);
  o.fit_cores = {1, 32};  // no cpu-32c
  m = BuildInfAdapterCapacity(ResNets(), o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  o = {};
  o.slo = Millis(600);  // no records at 600 ms
  EXPECT_EQ(BuildInfAdapterCapacity(ResNets(), o).status().code(), StatusCode::kNotFound);
  ProfileSuite empty;
  TaskSpec task;
  task.name = "image";
  empty.AddTask(task);
  EXPECT_EQ(BuildInfAdapterCapacity(empty).status().code(), StatusCode::kFailedPrecondition);
}

// infadapter-resnet without the lines for which `drop` is true.
ProfileSuite ResNetsWithout(const std::function<bool(const std::string&)>& drop) {
  std::istringstream in(WriteProfileText(ResNets()));
  std::string text, line;
  while (std::getline(in, line))
    if (!drop(line)) text += line + "\n";
  auto s = ParseProfileText(text, "infadapter-resnet with gaps");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(InfAdapterCapacity, MissingCoreCountsAreInterpolatedAndNoted) {
  auto full = BuildInfAdapterCapacity(ResNets());
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_TRUE(full->notes.empty()) << full->notes.front();  // the committed table is complete
  // resnet50 loses its 750 ms capacity record at 4 cores (a fit point) and everything at
  // 6 cores (no capacity record and no latency, so no p99 at all).
  const ProfileSuite gaps = ResNetsWithout([](const std::string& l) {
    return l.find("cpu-4c resnet50 750000 ") != std::string::npos ||
           l.find("cpu-6c resnet50 ") != std::string::npos;
  });
  auto m = BuildInfAdapterCapacity(gaps);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->notes.size(), 2u);
  EXPECT_NE(m->notes[0].find("resnet50: no capacity record at 4 cores"), std::string::npos)
      << m->notes[0];
  EXPECT_NE(m->notes[0].find("fitted on 1, 2, 8, 16 cores"), std::string::npos) << m->notes[0];
  EXPECT_NE(m->notes[1].find("resnet50: no p99 at 6 cores"), std::string::npos) << m->notes[1];
  // The fit is the least-squares line through the four remaining points.
  std::vector<double> xs, ys;
  for (int c : {1, 2, 8, 16}) {
    for (const CapacityPoint& p : ResNets().capacity_points()) {
      if (p.slo == Millis(750) && ResNets().variants()[p.variant].name == "resnet50" &&
          ResNets().hardware()[p.hardware].cores == c) {
        xs.push_back(c);
        ys.push_back(p.capacity_rps);
      }
    }
  }
  auto line = FitLine(xs, ys);
  ASSERT_TRUE(line.ok());
  const InfAdapterVariantCapacity& r50 = Variant(*m, "resnet50");
  EXPECT_DOUBLE_EQ(r50.fit.slope, line->slope);
  EXPECT_DOUBLE_EQ(r50.fit.intercept, line->intercept);
  EXPECT_NE(r50.fit.slope, Variant(*full, "resnet50").fit.slope);
  // p99 at 6 cores: halfway between the measured 5 and 7 cores; feasible at 750 ms.
  const Duration p5 = *r50.P99(5), p7 = *r50.P99(7);
  ASSERT_TRUE(r50.P99(6).has_value());
  EXPECT_EQ(*r50.P99(6), p5 + (p7 - p5) / 2);
  EXPECT_TRUE(r50.Feasible(6, Millis(750)));
  // The other variants are as before.
  EXPECT_EQ(Variant(*m, "resnet18").fit.slope, Variant(*full, "resnet18").fit.slope);

  // Nothing is extrapolated: without any record at 20 cores there is no p99 there.
  const ProfileSuite top = ResNetsWithout(
      [](const std::string& l) { return l.find("cpu-20c resnet50 ") != std::string::npos; });
  auto t = BuildInfAdapterCapacity(top);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FALSE(Variant(*t, "resnet50").P99(20).has_value());
  EXPECT_FALSE(Variant(*t, "resnet50").Feasible(20, Millis(750)));
}

}  // namespace
}  // namespace sloserve
