// The tree-free parse of the common inference request (infer_fast_path.h) against the
// tree parser it replaced: whatever the body, ParseInferRequest (fast path first, then
// the streaming parser) and the streaming parser alone give the same call or the same
// error as ParseInferRequestWithTree (infer_parse_compare.h).
#include "sloserve/server/infer_fast_path.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "infer_parse_compare.h"
#include "sloserve/server/kserve_handler.h"

namespace sloserve {
namespace {

TaskInfo ImageTask() {
  TaskInfo t;
  t.name = "image";
  t.variants = {"resnet18"};
  t.input_name = "input";
  t.input_datatype = "FP32";
  t.input_shape = {-1, 4};
  t.default_slo = Millis(150);
  return t;
}

void ExpectSameAsTree(const std::string& body) {
  sloserve::ExpectSameAsTree(ImageTask(), body);
}

const char* kCommon =
    R"({"id":"r-1","inputs":[{"name":"input","shape":[2,4],"datatype":"FP32",)"
    R"("data":[0,1.5,-2,3e2,-0,0.25,1E-3,-4.5e+1]}],"parameters":{"slo_ms":12.5}})";

TEST(InferFastPathTest, ReadsTheCommonShape) {
  const auto common = ScanCommonInferRequest(kCommon);
  ASSERT_TRUE(common.has_value());
  EXPECT_EQ(common->id, "r-1");
  EXPECT_EQ(common->input_name, "input");
  EXPECT_EQ(common->datatype, "FP32");
  EXPECT_EQ(common->shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(common->slo_ms, 12.5);
  std::vector<uint8_t> bytes;
  int64_t count = 0;
  ASSERT_TRUE(AppendFp32Numbers(common->data, count, bytes));
  ASSERT_EQ(count, 8);
  float values[8];
  std::memcpy(values, bytes.data(), sizeof values);
  EXPECT_EQ(values[3], 300.0f);
  EXPECT_FALSE(std::signbit(values[4]));  // "-0" is the integer 0, as the tree reads it
  EXPECT_EQ(values[7], -45.0f);
  ExpectSameAsTree(kCommon);
}

TEST(InferFastPathTest, LeavesEverythingElseToTheTree) {
  for (const char* body : {
           R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1,2,3,4],)"
           R"("parameters":{}}]})",  // input parameters
           R"({"inputs":[{"name":"in\u0070ut","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})",
           R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[[1,2],[3,4]]}]})",
           R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}],)"
           R"("outputs":[{"name":"output"}]})",
           R"({"inputs":[{"name":"input","name":"input","shape":[1,4],"datatype":"FP32",)"
           R"("data":[1,2,3,4]}]})",  // repeated key
           R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]} x)",
       }) {
    EXPECT_FALSE(ScanCommonInferRequest(body).has_value()) << body;
    ExpectSameAsTree(body);
  }
}

TEST(InferFastPathTest, SameAnswersAsTheTreeForValidAndInvalidBodies) {
  const std::string head = R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[)";
  const std::string tail = R"(]}],"parameters":{"slo_ms":150}})";
  for (const char* data : {"1,2,3,4",
                           " 1 , 2 ,3,4 ",
                           "1,2,3",
                           "1,2,3,4,5",
                           "1e39,0,0,0",
                           "3.4028235e38,0,0,0",
                           "1e-50,0,0,0",
                           "1e-400,0,0,0",
                           "1e400,0,0,0",
                           "-0,-0.0,0e0,-0e0",
                           "01,2,3,4",
                           "1.,2,3,4",
                           ".5,2,3,4",
                           "+1,2,3,4",
                           "1,2,3,",
                           ",1,2,3",
                           "NaN,1,2,3",
                           "true,1,2,3",
                           "\"1\",2,3,4",
                           "null,1,2,3",
                           "99999999999999999999,1,2,3",
                           "-9223372036854775809,1,2,3",
                           "0.1,0.2,0.30000000000000004,16777217"}) {
    ExpectSameAsTree(head + data + tail);
  }
  for (const char* shape : {"[1,4]", "[0,4]", "[2,4]", "[1,3]", "[1]", "[]", "[1,4,1]", "[-1,4]",
                            "[1.0,4]", "[1e0,4]", "[2147483648,4]", "[99999999999999999999,4]"}) {
    ExpectSameAsTree(R"({"inputs":[{"name":"input","shape":)" + std::string(shape) +
                     R"(,"datatype":"FP32","data":[1,2,3,4]}]})");
  }
  for (const char* params :
       {"", R"(,"parameters":{})", R"(,"parameters":{"slo_ms":0})",
        R"(,"parameters":{"slo_ms":-1})", R"(,"parameters":{"slo_ms":60000})",
        R"(,"parameters":{"slo_ms":60000.1})", R"(,"parameters":{"slo_ms":0.0001})",
        R"(,"parameters":{"slo_ms":"5"})", R"(,"parameters":{"slo_ms":5,"slo_ms":6})",
        R"(,"parameters":[])", R"(,"id":7)", R"(,"id":"a b")", R"(,"id":"")",
        R"(,"id":"x","id":"y")"}) {
    ExpectSameAsTree(R"({"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32",)"
                     R"("data":[1,2,3,4]}])" +
                     std::string(params) + "}");
  }
  for (const char* input : {R"("name":"other","shape":[1,4],"datatype":"FP32","data":[1,2,3,4])",
                            R"("name":"input","shape":[1,4],"datatype":"FP64","data":[1,2,3,4])",
                            R"("name":"input","shape":[1,4],"data":[1,2,3,4])",
                            R"("name":"input","datatype":"FP32","data":[1,2,3,4])",
                            R"("name":"input","shape":[1,4],"datatype":"FP32")"}) {
    ExpectSameAsTree(R"({"inputs":[{)" + std::string(input) + "}]}");
  }
}

// Random single-byte edits of the common body (most make it invalid JSON, or valid JSON
// of another meaning): the fast path never answers differently from the tree.
TEST(InferFastPathTest, SameAnswersAsTheTreeUnderRandomEdits) {
  const std::string base = kCommon;
  const std::string alphabet = "{}[]\",:.-+eE0123456789 \\u\x01\xc3xa";
  std::mt19937 rng(15);
  for (int i = 0; i < 3000; ++i) {
    const std::string body = RandomlyEdited(base, alphabet, rng);
    ExpectSameAsTree(body);
  }
}

}  // namespace
}  // namespace sloserve
