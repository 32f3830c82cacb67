// The streaming inference request parser (infer_request_parser.h) against the tree parser
// it replaced (infer_parse_compare.h): every datatype, nesting, several inputs, outputs,
// parameters, the binary data extension, repeated keys, members in any order, numbers at
// the datatypes' limits and random edits of each body give the same call or the same
// error; the JSON limits hold for a direct caller too.
#include "sloserve/server/infer_request_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "infer_parse_compare.h"
#include "sloserve/server/json_limits.h"

namespace sloserve {
namespace {

// Any datatype, any rank: the parser's own checks decide.
TaskInfo OpenTask() {
  TaskInfo t;
  t.name = "m";
  t.variants = {"v"};
  t.input_name = "x";
  t.output_name = "y";
  t.default_slo = Millis(100);
  t.apps = {"chat"};
  return t;
}

TaskInfo DeclaredTask(const std::string& datatype) {
  TaskInfo t = OpenTask();
  t.input_datatype = datatype;
  t.input_shape = {-1, -1};
  return t;
}

std::string Input(const std::string& datatype, const std::string& shape, const std::string& data) {
  return R"({"name":"x","datatype":")" + datatype + R"(","shape":)" + shape + R"(,"data":)" + data +
         "}";
}

std::string Doc(const std::string& inputs, const std::string& rest = "") {
  return R"({"inputs":[)" + inputs + "]" + rest + "}";
}

void ExpectSame(const std::string& body) {
  ExpectSameAsTree(OpenTask(), body);
}

TEST(InferRequestParserTest, EveryDatatypeAndItsLimits) {
  const std::vector<std::pair<const char*, std::vector<const char*>>> cases = {
      {"BOOL", {"true", "false", "0", "1", "null", "\"true\""}},
      {"BYTES", {"\"\"", "\"ab\"", "\"\\u00e9\\n\"", "1", "null", "[\"a\"]"}},
      {"INT8", {"-128", "127", "128", "-129", "0", "-0", "1.0", "1e2", "true"}},
      {"UINT8", {"0", "255", "256", "-1", "-0"}},
      {"INT16", {"-32768", "32767", "32768", "-32769"}},
      {"UINT16", {"65535", "65536"}},
      {"INT32", {"-2147483648", "2147483647", "2147483648", "-2147483649"}},
      {"UINT32", {"4294967295", "4294967296"}},
      {"INT64",
       {"-9223372036854775808", "9223372036854775807", "9223372036854775808",
        "-9223372036854775809", "18446744073709551615"}},
      {"UINT64", {"18446744073709551615", "18446744073709551616", "-1", "0"}},
      {"FP16", {"65504", "65519.99", "65520", "-65504", "6e-8", "1e-8", "0.1", "true"}},
      {"BF16", {"3.3895e38", "3.3896e38", "3.4e38", "-1.5", "1e-40"}},
      {"FP32",
       {"3.4028234663852886e38", "3.4028235677973366e38", "3.5e38", "-3.4e38", "1e-46", "1",
        "18446744073709551615", "-9223372036854775808"}},
      {"FP64", {"1.7976931348623157e308", "-1.7976931348623157e308", "5e-324", "1e309", "\"1\""}},
      {"FP8", {"1", "2.5", "\"x\""}},
      {"INT", {"1", "null"}},
      {"UINT7", {"1", "-1"}},
      {"STRING", {"1", "\"s\"", "true", "null"}},
  };
  for (const auto& [datatype, values] : cases) {
    for (const char* v : values) {
      const std::string dt = datatype;
      ExpectSame(Doc(Input(dt, "[1,2]", std::string("[") + v + "," + v + "]")));
      ExpectSame(Doc(Input(dt, "[2,1]", std::string("[[") + v + "],[" + v + "]]")));
      ExpectSameAsTree(DeclaredTask(dt), Doc(Input(dt, "[1,1]", std::string("[") + v + "]")));
    }
  }
}

TEST(InferRequestParserTest, DocumentShapesAndErrors) {
  const std::string fp = Input("FP32", "[1,2]", "[1,2]");
  for (
      const std::string& body : {
          Doc(fp),
          Doc(fp + "," + fp),                                 // repeated input
          Doc(fp + "," + Input("FP32", "[1,2]", "[1,2,3]")),  // second input refused first
          Doc(R"({"name":"z","datatype":"FP32","shape":[1],"data":[1]},)" + fp),
          Doc("1," + fp),
          Doc(fp + ",[]"),
          Doc(R"({"name":7})"),
          Doc(R"({"datatype":"FP32"})"),
          std::string(R"({"inputs":[]})"),
          std::string(R"({"inputs":{}})"),
          std::string(R"({"id":"a"})"),
          std::string(R"([1,2])"),
          std::string(R"("x")"),
          std::string(R"({"id":1,"inputs":[]})"),
          // members in any order; data before datatype and shape; datatype given twice
          std::string(R"({"inputs":[{"data":[1,2],"shape":[1,2],"name":"x","datatype":"INT8"}]})"),
          std::string(
              R"({"inputs":[{"datatype":"FP32","data":[1,2.5],"datatype":"INT8","shape":[1,2],"name":"x"}]})"),
          std::string(
              R"({"inputs":[{"datatype":"INT8","data":[1,2],"datatype":"INT8","shape":[1,2],"name":"x"}]})"),
          std::string(
              R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1,2],"data":[1,300],"data":[3,4]}]})"),
          std::string(
              R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1,2],"data":[3,4],"data":[1,300]}]})"),
          std::string(
              R"({"inputs":[{"name":"x","shape":[1,2],"shape":[2,1],"datatype":"INT8","data":[[1],[2]]}]})"),
          std::string(R"({"inputs":[1],"inputs":[)" + fp + "]}"),
          std::string(R"({"inputs":[)" + fp + R"(],"inputs":[1]})"),
          // shapes
          Doc(Input("FP32", "[]", "[]")),
          Doc(Input("FP32", "[0,2]", "[]")),
          Doc(Input("FP32", "[1,-2]", "[]")),
          Doc(Input("FP32", "[1,[2]]", "[1,2]")),
          Doc(Input("FP32", "{}", "[1,2]")),
          Doc(Input("FP32", "[1,2.0]", "[1,2]")),
          Doc(Input("FP32", "[1,18446744073709551615]", "[1,2]")),
          Doc(Input("FP32", "[1099511627776,1099511627776]", "[1,2]")),
          Doc(Input("FP32", "[2147483648,1]", "[1,2]")),
          // data
          Doc(Input("FP32", "[1,2]", "{}")),
          Doc(Input("FP32", "[1,2]", "[1,{}]")),
          Doc(Input("FP32", "[1,2]", "[[1],[[2]]]")),
          Doc(Input("FP32", "[1,2]", "[[],[1,2],[]]")),
          Doc(Input("FP32", "[1,2]", "[1,2,3]")),
          Doc(Input("FP32", "[1,2]", "[1,\"2\",{}]")),
          Doc(R"({"name":"x","datatype":"FP32","shape":[1,2]})"),
          Doc(R"({"name":"x","datatype":"FP32","shape":[1,2],"data":null})"),
          Doc(R"({"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2],"parameters":[]})"),
          Doc(R"({"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2],"parameters":{"binary_data_size":8}})"),
          Doc(R"({"name":"x","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":-8}})"),
          Doc(R"({"name":"x","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}})"),
          Doc(R"({"name":"x","datatype":7,"shape":[1,2],"data":[1,2]})"),
          // parameters
          Doc(fp, R"(,"parameters":{"slo_ms":20,"app":"chat","priority":0})"),
          Doc(fp, R"(,"parameters":{"slo_ms":[],"app":1})"),
          Doc(fp, R"(,"parameters":{"app":"other"})"),
          Doc(fp, R"(,"parameters":{"app":""})"),
          Doc(fp, R"(,"parameters":{"priority":1.5})"),
          Doc(fp, R"(,"parameters":{"priority":18446744073709551615})"),
          Doc(fp, R"(,"parameters":{"priority":-1})"),
          Doc(fp, R"(,"parameters":{"binary_data_output":1})"),
          Doc(fp, R"(,"parameters":{"binary_data_output":true,"binary_data_output":false})"),
          Doc(fp, R"(,"parameters":{"slo_ms":1e9},"parameters":{"slo_ms":5})"),
          Doc(fp, R"(,"parameters":"p")"),
          Doc(fp, R"(,"parameters":{"other":{"slo_ms":"x"}})"),
          // outputs
          Doc(fp, R"(,"outputs":[{"name":"y"}])"),
          Doc(fp, R"(,"outputs":[{"name":"y","parameters":{"binary_data":true}}])"),
          Doc(fp, R"(,"outputs":[{"name":"y","parameters":{"binary_data":1}}])"),
          Doc(fp, R"(,"outputs":[{"name":"y","parameters":[]}])"),
          Doc(fp, R"(,"outputs":[{"name":"y"},{"name":"y"}])"),
          Doc(fp, R"(,"outputs":[{"name":"z"}])"),
          Doc(fp, R"(,"outputs":[1])"),
          Doc(fp, R"(,"outputs":{})"),
          Doc(fp, R"(,"outputs":[],"parameters":{"binary_data_output":true})"),
          Doc(fp, R"(,"outputs":[{"name":"z"}],"outputs":[{"name":"y"}])"),
          Doc(fp, R"(,"outputs":[{"name":"z"}],"parameters":{"slo_ms":-1})"),
          // ids and unknown members
          Doc(fp, R"(,"id":"")"),
          Doc(fp, R"(,"id":null)"),
          Doc(fp, R"(,"id":"\u00e9\"")"),
          Doc(fp, R"(,"extra":{"inputs":[1]},"more":[[{"id":1}]])"),
          // not JSON
          Doc(fp, ","),
          Doc(fp) + "x",
          Doc(fp, R"(,"id":"\ud800")"),
          std::string("{\"inputs\":[") + fp + "],\"id\":\"\xff\"}",
          std::string(""),
      }) {
    ExpectSame(body);
  }
}

TEST(InferRequestParserTest, BinaryDataExtension) {
  const std::string json =
      Doc(R"({"name":"x","datatype":"INT16","shape":[1,2],"parameters":{"binary_data_size":4}})");
  const std::string bin("\x01\x00\xff\xff", 4);
  for (const std::string& extra : {std::string(), std::string("\x01", 1), std::string("zz")}) {
    const std::string body = json + bin + extra;
    for (const std::string& header :
         {std::to_string(json.size()), std::string("0"), std::string("x"), std::string("-1"),
          std::to_string(body.size() + 1), std::to_string(json.size() - 1)}) {
      ExpectSameAsTree(OpenTask(), body, header);
    }
  }
  const std::string bytes_json =
      Doc(R"({"name":"x","datatype":"BYTES","shape":[1,1],"parameters":{"binary_data_size":6}})");
  ExpectSameAsTree(OpenTask(), bytes_json + std::string("\x02\0\0\0ab", 6),
                   std::to_string(bytes_json.size()));
  const std::string bool_json =
      Doc(R"({"name":"x","datatype":"BOOL","shape":[1,2],"parameters":{"binary_data_size":2}})");
  ExpectSameAsTree(OpenTask(), bool_json + std::string("\x01\x02", 2),
                   std::to_string(bool_json.size()));
}

// JSON allows no raw NUL byte; the parser takes one for the end of input, so a body with
// anything after a NUL was accepted as what came before it (every parser: the fast path,
// streaming and the tree).
TEST(InferRequestParserTest, ANulByteIsMalformedJson) {
  const std::string json = Doc(R"({"name":"x","datatype":"INT16","shape":[1,2],"data":[1,2]})");
  for (const std::string& tail : {std::string("\0x", 2), std::string("\0", 1)}) {
    const std::string body = json + tail;
    const auto call = ParseInferRequest(OpenTask(), body, Seconds(10));
    ASSERT_FALSE(call.ok());
    EXPECT_EQ(call.status().message(), "malformed JSON in request body: a NUL byte at offset " +
                                           std::to_string(json.size()));
    ExpectSameAsTree(OpenTask(), body, "");
  }
  ASSERT_TRUE(ParseInferRequest(OpenTask(), json, Seconds(10)).ok());
  // A JSON part cut short by Inference-Header-Content-Length says so.
  const auto cut =
      ParseInferRequest(OpenTask(), json, Seconds(10), std::to_string(json.size() - 3));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("Inference-Header-Content-Length"), std::string::npos)
      << cut.status().message();
}

// Errors say what is wrong with the value: too large, and whose parameters.
TEST(InferRequestParserTest, ErrorsNameTheRangeAndTheOwner) {
  const auto message = [](const std::string& body) {
    const auto call = ParseInferRequest(OpenTask(), body, Seconds(10));
    ExpectSameAsTree(OpenTask(), body, "");
    return call.ok() ? std::string("ok") : std::string(call.status().message());
  };
  EXPECT_EQ(
      message(
          Doc(R"({"name":"x","datatype":"INT16","shape":[18446744073709551616,2],"data":[1,2]})")),
      "input 'shape' must hold integers from 0 to 2^63-1");
  EXPECT_EQ(message(Doc(R"({"name":"x","datatype":"INT16","shape":[1,2],"data":[1,2]})",
                        R"(,"outputs":[{"name":"y","parameters":3}])")),
            "output 'parameters' must be an object");
}

TEST(InferRequestParserTest, DeepNesting) {
  // `data` may nest 32 levels; one more is refused, by both parsers.
  for (int levels : {31, 32, 33, 60}) {
    const std::string data = std::string(levels, '[') + "1" + std::string(levels, ']');
    ExpectSame(Doc(Input("FP32", "[1]", data)));
  }
  // The document may nest 64 levels (the pre-scan's limit): the streaming parser refuses
  // deeper ones itself, with the pre-scan's message, before reading to the end.
  const std::string limit_message =
      "request body: " + std::string(JsonNestedTooDeeply(JsonLimits{}).message());
  for (int levels : {62, 63, 64, 100000}) {
    const std::string body =
        Doc(Input("FP32", "[1]", "[1]"),
            R"(,"extra":)" + std::string(levels, '[') + std::string(levels, ']'));
    ExpectSame(body);
    const auto call = ParseInferRequestStreaming(OpenTask(), body, Seconds(60));
    EXPECT_EQ(!call.ok() && call.status().message() == limit_message, levels + 1 > 64) << levels;
  }
  // Strings and value counts are bounded too.
  const std::string long_id(JsonLimits{}.max_string_bytes + 1, 'a');
  ExpectSame(Doc(Input("FP32", "[1]", "[1]"), R"(,"id":")" + long_id + "\""));
}

TEST(InferRequestParserTest, HugeArraysAndManyInputs) {
  std::string flat = "[";
  std::string nested = "[";
  const int rows = 200;
  const int cols = 100;  // 20,000 elements
  for (int r = 0; r < rows; ++r) {
    nested += r > 0 ? ",[" : "[";
    for (int c = 0; c < cols; ++c) {
      const std::string v = std::to_string((r * cols + c) % 1000) + ".25";
      flat += (r + c > 0 ? "," : "") + v;
      nested += (c > 0 ? "," : "") + v;
    }
    nested += "]";
  }
  flat += "]";
  nested += "]";
  const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  ExpectSame(Doc(Input("FP32", shape, flat)));
  ExpectSame(Doc(Input("FP64", shape, nested)));
  ExpectSame(Doc(Input("FP16", shape, nested)));
  // Many small inputs: refused at the second, whatever follows.
  std::string inputs;
  for (int i = 0; i < 5000; ++i) inputs += (i > 0 ? "," : "") + Input("INT8", "[1,1]", "[1]");
  ExpectSame(Doc(inputs));
  std::string outputs;
  for (int i = 0; i < 5000; ++i) outputs += i > 0 ? R"(,{"name":"y"})" : R"({"name":"y"})";
  ExpectSame(Doc(Input("INT8", "[1,1]", "[1]"), R"(,"outputs":[)" + outputs + "]"));
}

// Random single-byte edits of bodies of every kind: most are invalid JSON, the rest valid
// JSON of another meaning; both parsers always agree.
TEST(InferRequestParserTest, SameAnswersAsTheTreeUnderRandomEdits) {
  const std::vector<std::string> bases = {
      Doc(Input("INT8", "[2,2]", "[[1,-2],[3,127]]"),
          R"(,"id":"r","parameters":{"slo_ms":20,"app":"chat","priority":1,"binary_data_output":false},)"
          R"("outputs":[{"name":"y","parameters":{"binary_data":true}}])"),
      Doc(Input("BYTES", "[1,2]", R"(["a\"b","\u00e9"])")),
      Doc(Input("BOOL", "[1,3]", "[true,false,null]")),
      Doc(R"({"data":[0.5,1e-3],"shape":[1,2],"parameters":{},"name":"x","datatype":"FP16"})"),
  };
  const std::string alphabet = "{}[]\",:.-+eE0123456789 \\u\x01\xc3xatn";
  std::mt19937 rng(16);
  for (int i = 0; i < 2000; ++i) {
    const std::string body = RandomlyEdited(bases[i % bases.size()], alphabet, rng);
    ExpectSame(body);
  }
}

}  // namespace
}  // namespace sloserve
