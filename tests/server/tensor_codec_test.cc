#include "sloserve/server/tensor_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sloserve {
namespace {

using json = nlohmann::json;

Status Convert(const std::string& datatype, const std::string& data) {
  std::vector<uint8_t> out;
  int64_t count = 0;
  return JsonToTensorData(json::parse(data), datatype, count, out);
}

// Each datatype's range edge: the last value inside is accepted, the first outside is a
// 400 naming the element, the value and the range (never wrapped, never infinity).
TEST(TensorCodecTest, JsonValuesOutsideTheDatatypeRangeAreRefused) {
  struct Edge {
    const char* datatype;
    const char* inside;
    const char* outside;
  };
  const Edge edges[] = {
      {"UINT8", "[0, 255]", "[255, 256]"},
      {"UINT8", "[0]", "[-1]"},
      {"INT8", "[-128, 127]", "[128]"},
      {"INT8", "[-128]", "[-129]"},
      {"UINT16", "[65535]", "[65536]"},
      {"INT16", "[-32768, 32767]", "[32768]"},
      {"UINT32", "[4294967295]", "[4294967296]"},
      {"INT32", "[-2147483648, 2147483647]", "[2147483648]"},
      {"UINT64", "[18446744073709551615]", "[-1]"},
      {"INT64", "[-9223372036854775808, 9223372036854775807]", "[9223372036854775808]"},
      {"FP16", "[65504, -65504, 65519]", "[70000]"},
      {"FP16", "[0.5]", "[-65520]"},
      {"BF16", "[3.0e38]", "[3.4e38]"},
      {"FP32", "[3.4028234e38]", "[3.5e38]"},
  };
  for (const Edge& e : edges) {
    EXPECT_TRUE(Convert(e.datatype, e.inside).ok()) << e.datatype << " " << e.inside;
    const Status s = Convert(e.datatype, e.outside);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << e.datatype << " " << e.outside;
    EXPECT_NE(s.message().find("out of the range of " + std::string(e.datatype)), std::string::npos)
        << s.message();
  }
  // (FP64: every JSON number the parser accepts fits; 1e400 is refused as malformed JSON.)
  EXPECT_TRUE(Convert("FP64", "[1e308]").ok());
  EXPECT_EQ(Convert("UINT8", "[1, 256]").message(),
            "'data' element 1 (256) is out of the range of UINT8 [0, 255]");
}

TEST(TensorCodecTest, BinaryDataIsCheckedAgainstDatatypeAndCount) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(BinaryToTensorData(std::string(8, '\0'), "FP32", 2, out).ok());
  EXPECT_EQ(out.size(), 8u);
  EXPECT_FALSE(BinaryToTensorData(std::string(7, '\0'), "FP32", 2, out).ok());
  EXPECT_TRUE(BinaryToTensorData(std::string("\x01\x00", 2), "BOOL", 2, out).ok());
  EXPECT_FALSE(BinaryToTensorData(std::string("\x02\x00", 2), "BOOL", 2, out).ok());
  // BYTES: 4-byte little-endian length, then the bytes.
  const std::string two(
      "\x02\x00\x00\x00"
      "ab"
      "\x00\x00\x00\x00",
      10);
  EXPECT_TRUE(BinaryToTensorData(two, "BYTES", 2, out).ok());
  EXPECT_FALSE(BinaryToTensorData(two, "BYTES", 3, out).ok());               // too few
  EXPECT_FALSE(BinaryToTensorData(two.substr(0, 5), "BYTES", 1, out).ok());  // cut short
  EXPECT_FALSE(BinaryToTensorData(two, "BYTES", 1, out).ok());               // bytes left over
}

TEST(TensorCodecTest, JsonRenderingRoundTripsEveryDatatype) {
  const char* cases[][2] = {{"BOOL", "[true,false]"},
                            {"UINT8", "[0,255]"},
                            {"INT8", "[-128,127]"},
                            {"UINT16", "[65535,1]"},
                            {"INT16", "[-32768,5]"},
                            {"UINT32", "[4294967295,0]"},
                            {"INT32", "[-7,2147483647]"},
                            {"UINT64", "[18446744073709551615,2]"},
                            {"INT64", "[-9223372036854775808,3]"},
                            {"FP16", "[0.5,-65504]"},
                            {"BF16", "[1.5,-2]"},
                            {"FP32", "[0.25,-3.5]"},
                            {"FP64", "[0.1,1e300]"},
                            {"BYTES", "[\"a\",\"\"]"}};
  for (const auto& c : cases) {
    Tensor t;
    t.datatype = c[0];
    t.shape = {2};
    int64_t count = 0;
    ASSERT_TRUE(JsonToTensorData(json::parse(c[1]), t.datatype, count, t.data).ok()) << c[0];
    EXPECT_EQ(count, 2);
    EXPECT_TRUE(TensorDataValid(t, 2)) << c[0];
    std::string out = "[";
    ASSERT_TRUE(AppendTensorDataJson(out, t, 2)) << c[0];
    out += "]";
    EXPECT_EQ(json::parse(out), json::parse(c[1])) << c[0] << " -> " << out;
  }
}

}  // namespace
}  // namespace sloserve
