#include "sloserve/core/declared_key.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string_view>

namespace sloserve {
namespace {

// Config values and list items: strtod's grammar, all of the text, finite.
TEST(DeclaredKeyTest, ParseNumberTakesAllOfAFiniteNumber) {
  EXPECT_EQ(ParseNumber("2.5"), 2.5);
  EXPECT_EQ(ParseNumber(" +1e3\t"), 1000.0);  // spaces around and '+' are fine
  EXPECT_EQ(ParseNumber("0x10"), 16.0);
  EXPECT_EQ(ParseNumber("1e-400"), 0.0);  // underflow is a usable 0
  for (const char* bad : {"", " ", "abc", "1.5x", "1,5", "inf", "-inf", "nan", "1e400"}) {
    EXPECT_FALSE(ParseNumber(bad)) << bad;
  }
}

TEST(DeclaredKeyTest, ParseIntegerTakesAllOfADecimalInteger) {
  EXPECT_EQ(ParseInteger("42"), 42);
  EXPECT_EQ(ParseInteger(" +7 "), 7);
  EXPECT_EQ(ParseInteger("-9223372036854775808"), INT64_MIN);
  for (const char* bad : {"", "1.0", "1e3", "0x10", "12a", "9223372036854775808"}) {
    EXPECT_FALSE(ParseInteger(bad)) << bad;
  }
  EXPECT_EQ(ParseUnsigned("00ff", 16), 255u);
  EXPECT_FALSE(ParseUnsigned("-1"));
  EXPECT_FALSE(ParseUnsigned("+1"));
  EXPECT_FALSE(ParseUnsigned(""));
}

// Tokens of request bodies and data files: std::from_chars' grammar, no copy.
TEST(DeclaredKeyTest, ParseNumberTokenIsStrict) {
  double v = 0;
  EXPECT_TRUE(ParseNumberToken("0.125", v));
  EXPECT_EQ(v, 0.125);
  EXPECT_TRUE(ParseNumberToken("-2E2", v));
  EXPECT_EQ(v, -200.0);
  EXPECT_TRUE(ParseNumberToken("-0", v));
  EXPECT_TRUE(std::signbit(v));
  EXPECT_TRUE(ParseNumberToken("1.", v));
  EXPECT_EQ(v, 1.0);
  EXPECT_TRUE(ParseNumberToken("5e-324", v));  // the smallest subnormal
  for (const char* bad : {"", " 1", "1 ", "+1", "0x10", "1.5x", "inf", "nan", "1e400", "1e-400"}) {
    EXPECT_FALSE(ParseNumberToken(bad, v)) << bad;
  }
  // Only the view is read: a number followed by more text in the same buffer.
  const std::string_view buffer = "3.5,4";
  EXPECT_TRUE(ParseNumberToken(buffer.substr(0, 3), v));
  EXPECT_EQ(v, 3.5);
}

TEST(DeclaredKeyTest, ParseIntegerTokenIsStrict) {
  int64_t v = 0;
  EXPECT_TRUE(ParseIntegerToken("-1", v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(ParseIntegerToken("9223372036854775807", v));
  EXPECT_EQ(v, INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "+1", "1.0", "1e3", "0x1", "9223372036854775808"}) {
    EXPECT_FALSE(ParseIntegerToken(bad, v)) << bad;
  }
  const std::string_view buffer = "12,34";
  EXPECT_TRUE(ParseIntegerToken(buffer.substr(3), v));
  EXPECT_EQ(v, 34);
}

}  // namespace
}  // namespace sloserve
