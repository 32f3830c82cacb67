// EarlyShed (runtime/early_shed.h) on its own: which requests the network thread may
// refuse once the engine published that admission refuses its probe.
#include "sloserve/runtime/early_shed.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

// Model 0 served at 100 ms, two priority levels; the engine refuses level 2 only, and a
// request of up to 40 rows at 100 ms is judged on its wait.
void Publish(EarlyShed& shed, int64_t max_rows) {
  EXPECT_EQ(shed.SetSlos({Millis(100)}), (std::vector<size_t>{0}));
  shed.Publish([](TaskId, Duration, int32_t level) { return level == 2; },
               [max_rows](TaskId, Duration) { return max_rows; }, 2);
}

TEST(EarlyShedTest, RefusesOnlyWhatAdmissionWouldRefuse) {
  EarlyShed shed;
  Publish(shed, 40);
  EXPECT_TRUE(shed.Refuse(2, 0, /*probe_slo=*/true, 1));
  EXPECT_TRUE(shed.Refuse(2, 0, true, 40));
  EXPECT_FALSE(shed.Refuse(1, 0, true, 1));  // the level admission still takes
  // Admission admits a request that would miss even with nothing queued (its batch
  // decides), so neither more rows than that nor another SLO is refused here: a shorter
  // SLO may be such a request, a longer one may be admitted on its wait. The engine judges.
  EXPECT_FALSE(shed.Refuse(2, 0, true, 41));
  EXPECT_FALSE(shed.Refuse(2, 0, /*probe_slo=*/false, 1));
  EXPECT_FALSE(shed.Refuse(2, EarlyShed::kNoProbe, true, 1));
  EXPECT_EQ(shed.refused(), 2);
  // No request fits alone (the SLO is below the batches): none is refused early.
  EarlyShed none;
  Publish(none, -1);
  EXPECT_FALSE(none.Refuse(2, 0, true, 1));
  EXPECT_EQ(none.refused(), 0);
}

}  // namespace
}  // namespace sloserve
