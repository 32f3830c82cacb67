// ParseProfileText / WriteProfileText: a hand-written suite, every corrupt-input case
// (error names file, line and field), and the write -> parse round trip.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "profile/profile_test_data.h"
#include "sloserve/profile/profile.h"

using sloserve::profile_test_data::ToVector;

namespace sloserve {
namespace {

using profile_test_data::kTinyLines;
using profile_test_data::kTinySuite;

// The tiny suite with line `line` (1-based) replaced; line kTinyLines + 1 appends.
std::string TinyWith(int line = 0, const std::string& replacement = "") {
  std::string out;
  for (int i = 1; i <= kTinyLines; ++i)
    out += (i == line ? replacement : kTinySuite[i - 1]) + std::string("\n");
  if (line == kTinyLines + 1) out += replacement + "\n";
  return out;
}

TEST(ProfileParserTest, ParsesHandWrittenSuite) {
  StatusOr<ProfileSuite> s = ParseProfileText(TinyWith(), "tiny.prof");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name(), "tiny");
  EXPECT_EQ(s->provenance(), "hand-written for tests (not measured)");
  ASSERT_EQ(s->tasks().size(), 1u);
  EXPECT_EQ(s->tasks()[0].default_slo, Millis(150));
  EXPECT_EQ(s->tasks()[0].input_datatype, "FP32");
  EXPECT_EQ(s->tasks()[0].input_shape, (std::vector<int64_t>{-1, 3, 224, 224}));
  ASSERT_EQ(s->hardware().size(), 1u);
  EXPECT_DOUBLE_EQ(s->hardware()[0].price_per_hour, 0.19);
  EXPECT_EQ(s->hardware()[0].cores, 4);
  EXPECT_DOUBLE_EQ(s->hardware()[0].memory_gb, 15);
  ASSERT_EQ(s->variants().size(), 2u);
  const VariantSpec& big = s->variants()[*s->FindVariant("big")];
  EXPECT_DOUBLE_EQ(big.accuracy, 80.25);
  EXPECT_DOUBLE_EQ(big.memory_mb, 400);
  EXPECT_EQ(big.load_time, Seconds(5));

  const HardwareId hw = *s->FindHardware("cpu4");
  const VariantId small = *s->FindVariant("small");
  EXPECT_EQ(s->BatchSizes(hw, small), (std::vector<int>{1, 4}));
  // Adjacent lines with the same key continue one sample list.
  EXPECT_EQ(ToVector(s->Latency(hw, small, 1)->samples_us()),
            (std::vector<int64_t>{1000, 1100, 1200, 1300}));
  EXPECT_EQ(ToVector(s->LoadLatency(hw, small, 4)->samples_us()), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(s->LoadLatency(hw, small, 1), nullptr);  // batch 1 has no load component
  EXPECT_EQ(s->LoadLatency(hw, small, 3), s->LoadLatency(hw, small, 4));
  EXPECT_EQ(ToVector(s->ServiceLatency(hw, small, 3)->samples_us()),
            (std::vector<int64_t>{3010, 3120}));

  ASSERT_EQ(s->capacity_points().size(), 2u);
  EXPECT_EQ(s->capacity_points()[0].p99, Millis(700));
  EXPECT_DOUBLE_EQ(s->capacity_points()[0].capacity_rps, 12);
  EXPECT_FALSE(s->capacity_points()[1].p99.has_value());
  EXPECT_DOUBLE_EQ(s->capacity_points()[1].capacity_rps, 3.5);
  ASSERT_EQ(s->exec_histograms().size(), 1u);
  EXPECT_EQ(s->exec_histograms()[0].app, "app1");
  EXPECT_EQ(s->exec_histograms()[0].bin_width, Micros(500));
  EXPECT_EQ(s->exec_histograms()[0].weights, (std::vector<double>{0.1, 0.5, 0.4}));
}

TEST(ProfileParserTest, AcceptsCrlfTabsAndMissingFinalNewline) {
  std::string text = TinyWith(6, "hardware\tcpu4  0.19 4\t15");
  std::string crlf;
  for (char c : text) crlf += (c == '\n') ? std::string("\r\n") : std::string(1, c);
  crlf.resize(crlf.size() - 2);
  StatusOr<ProfileSuite> s = ParseProfileText(crlf, "tiny.prof");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->exec_histograms().size(), 1u);
}

struct CorruptCase {
  const char* what;
  int line;  // line replaced (kTinyLines + 1 appends)
  const char* replacement;
  int error_line;
  const char* expect;  // substring of the message, usually the field
};

void PrintTo(const CorruptCase& c, std::ostream* os) {
  *os << c.what;
}

class CorruptInputTest : public ::testing::TestWithParam<CorruptCase> {};

TEST_P(CorruptInputTest, FailsWithFileLineAndField) {
  const CorruptCase& c = GetParam();
  StatusOr<ProfileSuite> s = ParseProfileText(TinyWith(c.line, c.replacement), "tiny.prof");
  ASSERT_FALSE(s.ok()) << c.what;
  const std::string& msg = s.status().message();
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("tiny.prof:" + std::to_string(c.error_line) + ": "), std::string::npos)
      << c.what << ": " << msg;
  EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one-line message: " << msg;
}

constexpr int kAppend = kTinyLines + 1;
const CorruptCase kCorruptCases[] = {
    {"unknown record", kAppend, "frobnicate x", kAppend, "unknown record type \"frobnicate\""},
    {"missing field", 6, "hardware cpu4 0.19 4", 6, "field 'memory_gb': expected 4 fields, got 3"},
    {"extra field", 6, "hardware cpu4 0.19 4 15 16", 6, "expected 4 fields, got 5"},
    {"non-numeric accuracy", 7, "variant small image abc 100 2000000", 7,
     "field 'accuracy': expected a number, got \"abc\""},
    {"accuracy out of range", 7, "variant small image 120 100 2000000", 7, "field 'accuracy'"},
    {"nan accuracy", 7, "variant small image nan 100 2000000", 7, "field 'accuracy'"},
    {"negative memory", 7, "variant small image 70 -1 2000000", 7, "field 'memory_mb'"},
    {"fractional load time", 7, "variant small image 70 100 2.5", 7, "field 'load_time_us'"},
    {"unknown task", 7, "variant small text 70 100 2000000", 7, "field 'task': unknown task"},
    {"duplicate variant", 8, "variant small image 80 400 5000000", 8,
     "field 'name': duplicate name \"small\""},
    {"duplicate hardware", 7, "hardware cpu4 1 1 1", 7, "field 'name': duplicate"},
    {"duplicate task", 6, "task image 1 input FP32 -1", 6, "field 'name': duplicate"},
    {"zero cores", 6, "hardware cpu4 0.19 0 15", 6, "field 'cores'"},
    {"negative price", 6, "hardware cpu4 -0.19 4 15", 6, "field 'price_per_hour'"},
    {"bad shape", 5, "task image 150000 input FP32 -1,x", 5, "field 'shape'"},
    {"bad datatype", 5, "task image 150000 input FLOAT -1", 5, "field 'datatype'"},
    {"zero slo", 5, "task image 0 input FP32 -1", 5, "field 'slo_us'"},
    {"partial output", 5, "task image 150000 input FP32 -1 scores", 5, "expected 5 fields, got 6"},
    {"bad output datatype", 5, "task image 150000 input FP32 -1 scores FLOAT -1,10", 5,
     "field 'output_datatype'"},
    {"bad output shape", 5, "task image 150000 input FP32 -1 scores FP32 -1,0", 5,
     "field 'output_shape'"},
    {"negative latency", 11, "latency cpu4 small 4 3000 -5", 11,
     "field 'sample_us': negative latency"},
    {"fractional latency", 11, "latency cpu4 small 4 3000 1.5", 11,
     "field 'sample_us': expected an integer"},
    {"empty samples", 13, "latency cpu4 big 2", 13, "field 'sample_us': empty list"},
    {"unknown variant", 13, "latency cpu4 huge 2 5000", 13, "field 'variant': unknown variant"},
    {"unknown hardware", 13, "latency gpu big 2 5000", 13,
     "field 'hardware': unknown hardware type \"gpu\""},
    {"zero rows", 13, "latency cpu4 big 0 5000", 13, "field 'rows'"},
    {"non-adjacent duplicate latency", kAppend, "latency cpu4 small 1 5", kAppend,
     "field 'rows': latency for (cpu4, small, 1) already given at line 9"},
    {"load count mismatch", 12, "load cpu4 small 4 10", 12, "field 'sample_us'"},
    {"load without latency", 12, "load cpu4 big 4 10 20", 12, "no preceding latency"},
    {"capacity p99", 14, "capacity cpu4 big 750000 abc 12 15", 14, "field 'p99_us'"},
    {"duplicate capacity", 15, "capacity cpu4 big 750000 - 1 1", 15, "field 'slo_us'"},
    {"negative weight", 16, "exec_hist big app1 1000 500 0.1 -0.5", 16, "field 'weight'"},
    {"zero bin width", 16, "exec_hist big app1 1000 0 0.1", 16, "field 'bin_width_us'"},
    {"empty histogram", 16, "exec_hist big app1 1000 500", 16, "field 'weight': empty list"},
    {"bad version", 1, "sloserve-profile 2", 1, "field 'version'"},
    {"missing header", 1, "# nothing", 3, "expected 'sloserve-profile 1' as the first record"},
    {"duplicate suite", 4, "suite again", 4, "field 'name': duplicate 'suite'"},
    {"missing suite name", 3, "# no suite", kAppend, "field 'suite': missing"},
    {"suite without name", 3, "suite", 3, "field 'name': expected 1 fields, got 0"},
    {"missing provenance", 4, "", kAppend, "field 'provenance': missing"},
    {"empty provenance", 4, "provenance  ", 4, "field 'text': empty provenance"},
};

// Named by the case ("unknown_record") so ctest lists what broke, not the struct's bytes.
std::string CorruptCaseName(const ::testing::TestParamInfo<CorruptCase>& info) {
  std::string name = info.param.what;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllCases, CorruptInputTest, ::testing::ValuesIn(kCorruptCases),
                         CorruptCaseName);

TEST(ProfileParserTest, EmptyTextFails) {
  StatusOr<ProfileSuite> s = ParseProfileText("# only a comment\n", "e.prof");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("e.prof:2: "), std::string::npos) << s.status().message();
}

// Issue 37: `suite: /proc/self/environ` printed the environment (the first record was
// quoted). A file that is not a profile is named, not shown.
TEST(ProfileParserTest, NotAProfileIsNamedNotQuoted) {
  const std::string secret = std::string("FAKE_SECRET=abc") + '\0' + "OTHER=1 x\nmore\n";
  StatusOr<ProfileSuite> s = ParseProfileText(secret, "/proc/self/environ");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "/proc/self/environ:1: not a profile suite: expected 'sloserve-profile 1' as the "
            "first record");
}

TEST(ProfileParserTest, RoundTripsThroughWriter) {
  StatusOr<ProfileSuite> a = ParseProfileText(TinyWith(), "tiny.prof");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string text = WriteProfileText(*a);
  StatusOr<ProfileSuite> b = ParseProfileText(text, "written");
  ASSERT_TRUE(b.ok()) << b.status().ToString() << "\n" << text;
  EXPECT_EQ(WriteProfileText(*b), text);
  EXPECT_EQ(b->name(), a->name());
  EXPECT_EQ(b->provenance(), a->provenance());
  ASSERT_EQ(b->variants().size(), a->variants().size());
  for (size_t i = 0; i < a->variants().size(); ++i) {
    EXPECT_EQ(b->variants()[i].name, a->variants()[i].name);
    EXPECT_EQ(b->variants()[i].accuracy, a->variants()[i].accuracy);  // exact, not near
    EXPECT_EQ(b->variants()[i].load_time, a->variants()[i].load_time);
  }
  EXPECT_EQ(b->hardware()[0].price_per_hour, 0.19);
  for (const auto& [hw, v] : a->ProfiledPairs()) {
    ASSERT_EQ(b->BatchSizes(hw, v), a->BatchSizes(hw, v));
    for (int rows : a->BatchSizes(hw, v)) {
      EXPECT_EQ(ToVector(b->Latency(hw, v, rows)->samples_us()),
                ToVector(a->Latency(hw, v, rows)->samples_us()));
    }
  }
  EXPECT_EQ(ToVector(b->LoadLatency(0, 0, 4)->samples_us()),
            ToVector(a->LoadLatency(0, 0, 4)->samples_us()));
  EXPECT_EQ(b->capacity_points().size(), 2u);
  EXPECT_EQ(b->exec_histograms()[0].weights, a->exec_histograms()[0].weights);
}

// Numbers too large or too small for the writer's fixed form (found by the profile
// fuzzer, docs/fuzzing.md: 2.4e83 was written as a truncated 64-byte fixed form).
TEST(ProfileParserTest, ExtremeNumbersRoundTripThroughWriter) {
  StatusOr<ProfileSuite> a =
      ParseProfileText(TinyWith(16, "exec_hist big app1 1000 500 1.6e-05 2.4e83 1e-300 0.5"), "x");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string text = WriteProfileText(*a);
  StatusOr<ProfileSuite> b = ParseProfileText(text, "written");
  ASSERT_TRUE(b.ok()) << b.status().ToString() << "\n" << text;
  EXPECT_EQ(b->exec_histograms()[0].weights, a->exec_histograms()[0].weights);
  EXPECT_EQ(WriteProfileText(*b), text);
}

TEST(ProfileParserTest, TaskOutputIsOptionalAndRoundTrips) {
  // Without the output fields a task answers the emulated default; with them (a model
  // repository's, written by `profile measure`) the metadata declares the model's.
  StatusOr<ProfileSuite> a = ParseProfileText(TinyWith(), "tiny.prof");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->tasks()[0].output_name, "output");
  EXPECT_EQ(a->tasks()[0].output_shape, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(
      WriteProfileText(*a).find("task image 150000 input FP32 -1,3,224,224\n") != std::string::npos,
      true);
  StatusOr<ProfileSuite> b = ParseProfileText(
      TinyWith(5, "task image 150000 input FP32 -1,3,224,224 scores FP32 -1,10"), "out.prof");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->tasks()[0].output_name, "scores");
  EXPECT_EQ(b->tasks()[0].output_datatype, "FP32");
  EXPECT_EQ(b->tasks()[0].output_shape, (std::vector<int64_t>{-1, 10}));
  StatusOr<ProfileSuite> c = ParseProfileText(WriteProfileText(*b), "written");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->tasks()[0].output_name, "scores");
  EXPECT_EQ(c->tasks()[0].output_shape, (std::vector<int64_t>{-1, 10}));
}

TEST(ProfileParserTest, WriterSplitsLongSampleListsAndReadsThemBack) {
  ProfileSuite s;
  s.set_name("long");
  s.set_provenance("generated");
  TaskId t = s.AddTask({.name = "t", .default_slo = Millis(5)});
  HardwareId hw = s.AddHardware({.name = "h", .price_per_hour = 0.1234567, .cores = 2});
  VariantId v = s.AddVariant({.name = "v", .task = t, .accuracy = 1.0 / 3.0});
  std::vector<int64_t> samples;
  for (int i = 0; i < 250; ++i) samples.push_back((i * 7919) % 1000);
  s.AddLatency(hw, v, 10, LatencyDistribution(samples));
  s.AddExecHistogram({.app = "a", .variant = v, .bin_width = Micros(3), .weights = {1e-3, 2.5}});
  const std::string text = WriteProfileText(s);
  EXPECT_NE(text.find("\nlatency h v 10 "), std::string::npos);
  StatusOr<ProfileSuite> back = ParseProfileText(text, "w");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToVector(back->Latency(hw, v, 10)->samples_us()), samples);
  EXPECT_EQ(back->variants()[0].accuracy, 1.0 / 3.0);
  EXPECT_EQ(back->hardware()[0].price_per_hour, 0.1234567);
  EXPECT_EQ(back->exec_histograms()[0].weights, (std::vector<double>{1e-3, 2.5}));
  EXPECT_EQ(WriteProfileText(*back), text);
}

}  // namespace
}  // namespace sloserve
