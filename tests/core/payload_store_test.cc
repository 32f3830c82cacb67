#include "sloserve/core/payload_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace sloserve {
namespace {

Tensor Fp32(std::string name, size_t elements) {
  Tensor t;
  t.name = std::move(name);
  t.datatype = "FP32";
  t.shape = {static_cast<int64_t>(elements)};
  t.data.assign(elements * 4, uint8_t{7});
  return t;
}

TEST(PayloadStoreTest, PutGetRelease) {
  PayloadStore store(1 << 20);
  auto h = store.Put({Fp32("x", 3)});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_NE(*h, PayloadHandle{0});
  auto set = store.Get(*h);
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(set->size(), 1u);
  EXPECT_EQ((*set)[0].name, "x");
  EXPECT_EQ((*set)[0].datatype, "FP32");
  EXPECT_EQ((*set)[0].shape, std::vector<int64_t>{3});
  EXPECT_EQ((*set)[0].data.size(), 12u);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.bytes(), TensorSetBytes(*set));

  store.Release(*h);
  EXPECT_EQ(store.Get(*h), nullptr);
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(store.bytes(), 0u);
  // A reader that got the set before the release still holds valid tensors.
  EXPECT_EQ((*set)[0].data.size(), 12u);
  // Releasing twice, 0 or a never-issued handle is a no-op.
  store.Release(*h);
  store.Release(0);
  store.Release(12345);
  EXPECT_EQ(store.Get(0), nullptr);
  EXPECT_EQ(store.Get(12345), nullptr);
}

TEST(PayloadStoreTest, HandlesAreDistinctAndNeverZero) {
  PayloadStore store(1 << 20);
  std::set<PayloadHandle> seen;
  for (int i = 0; i < 100; ++i) {
    auto h = store.Put({});
    ASSERT_TRUE(h.ok());
    EXPECT_NE(*h, PayloadHandle{0});
    EXPECT_TRUE(seen.insert(*h).second);
    if (i % 2 == 0) store.Release(*h);  // released handles are not reused
  }
  EXPECT_EQ(store.size(), 50u);
}

TEST(PayloadStoreTest, BoundIsEnforcedAndFreedByRelease) {
  const size_t one = TensorSetBytes({Fp32("x", 100)});
  PayloadStore store(2 * one);
  EXPECT_EQ(store.max_bytes(), 2 * one);
  auto a = store.Put({Fp32("x", 100)});
  auto b = store.Put({Fp32("x", 100)});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(store.bytes(), 2 * one);
  auto c = store.Put({Fp32("x", 100)});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(c.status().message().find(std::to_string(2 * one)), std::string::npos)
      << c.status().message();
  EXPECT_EQ(store.size(), 2u);  // the refused set was not stored
  store.Release(*a);
  auto d = store.Put({Fp32("x", 100)});
  EXPECT_TRUE(d.ok());
  // A single set larger than the whole bound never fits.
  PayloadStore tiny(16);
  auto big = tiny.Put({Fp32("x", 100)});
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(tiny.bytes(), 0u);
}

TEST(PayloadStoreTest, DatatypeSizes) {
  EXPECT_EQ(DatatypeSize("BOOL"), 1u);
  EXPECT_EQ(DatatypeSize("UINT8"), 1u);
  EXPECT_EQ(DatatypeSize("FP16"), 2u);
  EXPECT_EQ(DatatypeSize("BF16"), 2u);
  EXPECT_EQ(DatatypeSize("INT32"), 4u);
  EXPECT_EQ(DatatypeSize("FP32"), 4u);
  EXPECT_EQ(DatatypeSize("INT64"), 8u);
  EXPECT_EQ(DatatypeSize("FP64"), 8u);
  EXPECT_EQ(DatatypeSize("BYTES"), 0u);
  EXPECT_EQ(DatatypeSize("NOPE"), 0u);
}

TEST(PayloadStoreTest, ConcurrentPutGetReleaseLeavesNothing) {
  PayloadStore store(1 << 24);
  constexpr int kThreads = 4, kEach = 2000;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Tensor x = Fp32("x", 4);
        x.data[0] = static_cast<uint8_t>(t);
        auto h = store.Put({std::move(x)});
        if (!h.ok()) {
          ++mismatches;
          continue;
        }
        auto got = store.Get(*h);
        if (!got || (*got)[0].data[0] != static_cast<uint8_t>(t)) ++mismatches;
        store.Release(*h);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(store.bytes(), 0u);
}

}  // namespace
}  // namespace sloserve
