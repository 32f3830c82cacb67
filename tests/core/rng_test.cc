#include "sloserve/core/rng.h"

#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace sloserve {
namespace {

std::vector<uint64_t> Draw(Rng rng, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(rng());
  return out;
}

TEST(RngTest, SameSeedAndNameGiveTheSameStream) {
  EXPECT_EQ(Draw(MakeRng(42, "arrivals"), 100), Draw(MakeRng(42, "arrivals"), 100));
  EXPECT_EQ(Draw(MakeRng(0, ""), 10), Draw(MakeRng(0, ""), 10));
}

TEST(RngTest, DifferentNamesOrSeedsGiveDifferentStreams) {
  const std::vector<uint64_t> base = Draw(MakeRng(42, "arrivals"), 16);
  EXPECT_NE(base, Draw(MakeRng(42, "sizes"), 16));
  EXPECT_NE(base, Draw(MakeRng(42, "arrivalz"), 16));  // one character apart
  EXPECT_NE(base, Draw(MakeRng(43, "arrivals"), 16));  // adjacent seeds
  // Many streams of one seed: no two share even their first draw.
  std::set<uint64_t> firsts;
  for (int i = 0; i < 1000; ++i) firsts.insert(MakeRng(7, "worker-" + std::to_string(i))());
  EXPECT_EQ(firsts.size(), 1000u);
}

TEST(RngTest, StreamsAreStableAcrossBuilds) {
  // Experiments promise reproducible results from a seed: pin the derivation so a change
  // to MixSeed/HashName (which would silently change every result) fails here.
  // HashName's offset basis is 1469598103934665603, one digit short of FNV-1a's standard
  // 14695981039346656037; it is still a fine hash and fixing it would change every stream.
  EXPECT_EQ(HashName(""), 1469598103934665603ULL);
  EXPECT_EQ(HashName("a"), 0x44bd8ad473cd9906ULL);
  EXPECT_EQ(MixSeed(0), 0xe220a8397b1dcdafULL);  // SplitMix64's first output for seed 0
  static_assert(HashName("x") == HashName("x"));
  Rng a = MakeRng(1, "s");
  Rng b(MixSeed(1 ^ HashName("s")));
  EXPECT_EQ(Draw(a, 5), Draw(b, 5));
}

TEST(RngTest, Uniform01IsInTheUnitIntervalAndSpread) {
  Rng rng = MakeRng(3, "uniform");
  double sum = 0;
  int low = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double u = Uniform01(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    low += u < 0.5;
  }
  // Deterministic stream, so these are fixed numbers; the bounds are loose (about 10 sigma).
  EXPECT_NEAR(sum / n, 0.5, 0.02);
  EXPECT_NEAR(static_cast<double>(low) / n, 0.5, 0.035);
}

}  // namespace
}  // namespace sloserve
