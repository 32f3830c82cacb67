#include "sloserve/core/ids.h"

#include <cstdint>
#include <limits>
#include <type_traits>

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(IdsTest, WidthsAndSentinel) {
  // Dense indices into vectors: unsigned, 32 bits for tables, 64 bits for counters that
  // grow with traffic (queries, batches).
  static_assert(std::is_same_v<VariantId, uint32_t>);
  static_assert(std::is_same_v<HardwareId, uint32_t>);
  static_assert(std::is_same_v<TaskId, uint32_t>);
  static_assert(std::is_same_v<WorkerId, uint32_t>);
  static_assert(std::is_same_v<AppId, uint32_t>);
  static_assert(std::is_same_v<QueryId, uint64_t>);
  static_assert(std::is_same_v<BatchId, uint64_t>);
  EXPECT_EQ(kNoId, std::numeric_limits<uint32_t>::max());
  // kNoId is the "none" of every 32-bit id and never a valid index.
  const WorkerId none = kNoId;
  EXPECT_EQ(none, kNoId);
  EXPECT_NE(WorkerId{0}, kNoId);
  EXPECT_EQ(static_cast<VariantId>(kNoId + 1ULL), VariantId{0});  // max + 1 wraps: it is the max
  // A 64-bit id holds kNoId as an ordinary value, never confused with "none" of 32 bits.
  const QueryId q = kNoId;
  EXPECT_EQ(q + 1, uint64_t{1} << 32);
}

}  // namespace
}  // namespace sloserve
