#include "sloserve/workload/model_arrivals.h"

#include <gtest/gtest.h>

#include <map>

#include "sloserve/workload/popularity.h"

namespace sloserve {
namespace {

ArrivalSpec Poisson(double qps, double seconds) {
  ArrivalSpec a;
  a.kind = "poisson";
  a.rate_qps = qps;
  a.horizon = SecondsF(seconds);
  return a;
}

std::vector<ModelArrivals::Arrival> Drain(ModelArrivals& a) {
  std::vector<ModelArrivals::Arrival> out;
  while (auto x = a.Next()) out.push_back(*x);
  return out;
}

TEST(ZipfSharesTest, SumToTheTotalAndFallWithRank) {
  const std::vector<double> s = ZipfShares(4, 1.0, 0.5);
  double sum = 0;
  for (double x : s) sum += x;
  EXPECT_NEAR(sum, 0.5, 1e-12);
  // 1, 1/2, 1/3, 1/4 over H_4 = 25/12, times 0.5
  EXPECT_NEAR(s[0], 0.5 * 12.0 / 25.0, 1e-12);
  EXPECT_NEAR(s[3], 0.5 * 3.0 / 25.0, 1e-12);
  const std::vector<double> equal = ZipfShares(3, 0.0);
  EXPECT_NEAR(equal[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(equal[2], 1.0 / 3, 1e-12);
}

TEST(ModelArrivalsTest, MergesInTimeOrderAndIsDeterministicForASeed) {
  const ArrivalSpec shared = Poisson(200, 20);
  const ArrivalSpec own = Poisson(30, 20);
  const std::vector<ModelStream> models = {
      {"a", 0.7, nullptr}, {"b", 0.3, nullptr}, {"c", 0, &own}};
  auto x = ModelArrivals::Create(shared, models, 7);
  auto y = ModelArrivals::Create(shared, models, 7);
  auto z = ModelArrivals::Create(shared, models, 8);
  ASSERT_TRUE(x.ok() && y.ok() && z.ok());
  const auto ax = Drain(**x), ay = Drain(**y), az = Drain(**z);
  ASSERT_EQ(ax.size(), ay.size());
  bool differs = ax.size() != az.size();
  for (size_t i = 0; i < ax.size(); ++i) {
    EXPECT_EQ(ax[i].at, ay[i].at);
    EXPECT_EQ(ax[i].model, ay[i].model);
    if (i > 0) {
      EXPECT_LE(ax[i - 1].at, ax[i].at) << i;
    }
    if (!differs && i < az.size()) differs = ax[i].at != az[i].at || ax[i].model != az[i].model;
  }
  EXPECT_TRUE(differs) << "another seed gave the same arrivals";
  std::map<size_t, int> count;
  for (const auto& a : ax) ++count[a.model];
  const double total = static_cast<double>(ax.size());
  // 230 qps x 20 s = 4,600 expected: a : b : c = 140 : 60 : 30 qps, wide margins.
  EXPECT_NEAR(count[0] / total, 140.0 / 230, 0.05);
  EXPECT_NEAR(count[1] / total, 60.0 / 230, 0.05);
  EXPECT_NEAR(count[2] / total, 30.0 / 230, 0.05);
}

TEST(ModelArrivalsTest, ZipfPopularityGivesRoughlyZipfCounts) {
  const ArrivalSpec shared = Poisson(1000, 30);
  const std::vector<double> shares = ZipfShares(10, 1.0);
  std::vector<ModelStream> models;
  for (size_t i = 0; i < shares.size(); ++i) models.push_back({"m" + std::to_string(i), shares[i]});
  auto a = ModelArrivals::Create(shared, models, 1);
  ASSERT_TRUE(a.ok());
  std::vector<int> count(models.size(), 0);
  int total = 0;
  while (auto x = (*a)->Next()) {
    ++count[x->model];
    ++total;
  }
  for (size_t i = 0; i < shares.size(); ++i)
    EXPECT_NEAR(static_cast<double>(count[i]) / total, shares[i], 0.2 * shares[i] + 0.005) << i;
  EXPECT_GT(count[0], 5 * count[9]);  // rank 1 vs rank 10: 10x expected
}

TEST(ModelArrivalsTest, TheSharedStreamAloneIsTheSingleModelWorkload) {
  const ArrivalSpec shared = Poisson(100, 10);
  auto one = ModelArrivals::Create(shared, {{"only", 1.0, nullptr}}, 3);
  auto single = MakeArrivalProcess(shared, 3);
  ASSERT_TRUE(one.ok() && single.ok());
  int n = 0;
  while (auto t = (*single)->Next()) {
    auto m = (*one)->Next();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->at, *t);
    EXPECT_EQ(m->model, 0u);
    ++n;
  }
  EXPECT_FALSE((*one)->Next().has_value());
  EXPECT_GT(n, 500);
}

TEST(ModelArrivalsTest, ModelsWithoutAShareAreNeverDrawn) {
  const ArrivalSpec shared = Poisson(500, 5);
  const ArrivalSpec own = Poisson(1, 0.001);
  auto a =
      ModelArrivals::Create(shared, {{"own", 0, &own}, {"x", 0.5}, {"zero", 0}, {"y", 0.5}}, 2);
  ASSERT_TRUE(a.ok());
  while (auto x = (*a)->Next()) EXPECT_NE(x->model, 2u);
}

}  // namespace
}  // namespace sloserve
