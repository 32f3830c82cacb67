#include "sloserve/core/echo_name.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

TEST(EchoNameTest, ShortNamesAreEchoedWhole) {
  EXPECT_EQ(EchoName("image"), "image");
  EXPECT_EQ(EchoName(std::string(kMaxEchoedName, 'a')), std::string(kMaxEchoedName, 'a'));
}

TEST(EchoNameTest, LongNamesAreCutAndSayHowLongTheyWere) {
  const std::string echoed = EchoName(std::string(100'000, 'm'));
  EXPECT_EQ(echoed, std::string(kMaxEchoedName, 'm') + "\xE2\x80\xA6(100000 bytes)");
}

TEST(EchoNameTest, TheCutDoesNotSplitAUtf8Character) {
  // 127 ASCII bytes, then a 3-byte character straddling the limit.
  const std::string name = std::string(127, 'a') + "\xE2\x82\xAC" + std::string(10, 'b');
  EXPECT_EQ(EchoName(name), std::string(127, 'a') + "\xE2\x80\xA6(140 bytes)");
}

}  // namespace
}  // namespace sloserve
