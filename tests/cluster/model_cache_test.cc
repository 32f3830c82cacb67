// The proxy's model cache: memory-accounted LRU eviction, pinned models kept.
#include "sloserve/cluster/model_cache.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(ModelCacheTest, EvictsLeastRecentlyUsedFirstUntilTheNewModelFits) {
  ModelCache c(1000);
  std::vector<int> evicted;
  ASSERT_TRUE(c.Insert(1, 300, &evicted));
  ASSERT_TRUE(c.Insert(2, 300, &evicted));
  ASSERT_TRUE(c.Insert(3, 300, &evicted));
  c.Touch(1);  // order, least recent first: 2, 3, 1
  EXPECT_EQ(c.LruOrder(), (std::vector<int>{2, 3, 1}));
  ASSERT_TRUE(c.Insert(4, 500, &evicted));  // needs 200 more than free: 2 and 3 go
  EXPECT_EQ(evicted, (std::vector<int>{2, 3}));
  EXPECT_EQ(c.LruOrder(), (std::vector<int>{1, 4}));
  EXPECT_DOUBLE_EQ(c.used_mb(), 800);
}

TEST(ModelCacheTest, PinnedModelsAreNotEvictedAndATooLargeModelChangesNothing) {
  ModelCache c(1000);
  std::vector<int> evicted;
  ASSERT_TRUE(c.Insert(1, 600, &evicted));
  c.Pin(1);
  EXPECT_FALSE(c.Insert(2, 500, &evicted));  // 1 is in use
  EXPECT_TRUE(evicted.empty());
  EXPECT_TRUE(c.Contains(1));
  EXPECT_FALSE(c.Insert(3, 1001, &evicted));  // larger than the cache
  EXPECT_FALSE(c.CanHold(1001));
  c.Unpin(1);
  ASSERT_TRUE(c.Insert(2, 500, &evicted));
  EXPECT_EQ(evicted, (std::vector<int>{1}));
}

}  // namespace
}  // namespace sloserve
