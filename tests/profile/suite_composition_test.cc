// ComposeSuite (docs/multi-model.md, "The composed suite"): models from several base
// suites, their hardware types united by name, each variant's records kept on its own
// suite's types only.
#include "sloserve/profile/suite_composition.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

ProfileSuite Parse(const std::string& text) {
  auto s = ParseProfileText(text, "test.prof");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *std::move(s) : ProfileSuite();
}

// Image classification on a CPU type shared with `Text`, which agrees on it.
ProfileSuite Image() {
  return Parse(
      "sloserve-profile 1\nsuite image-suite\nprovenance test\n"
      "task image 150000 input FP32 -1,3,224,224\n"
      "hardware cpu 0.19 4 15\n"
      "variant small image 70 100 1000\nvariant big image 80 400 2000\n"
      "latency cpu small 1 1000 1100\nlatency cpu small 4 3000\n"
      "latency cpu big 1 5000\n"
      "capacity cpu big 150000 - 12 15\n");
}

ProfileSuite Text() {
  return Parse(
      "sloserve-profile 1\nsuite text-suite\nprovenance test\n"
      "task text 100000 input_ids INT64 -1,-1\n"
      "hardware cpu 0.19 4 15\n"
      "variant bert text 90 500 3000\n"
      "latency cpu bert 1 20000\n");
}

// A recommender on two GPU/CPU types of its own, with Kairos' load component, and a
// dynamic model's execution-time histogram.
ProfileSuite Rec() {
  return Parse(
      "sloserve-profile 1\nsuite rec-suite\nprovenance test\n"
      "task rm2 350000 features FP32 -1,-1\n"
      "hardware gpu 0.526 4 16\nhardware small 0.149 2 16\n"
      "variant rm2 rm2 0 200 0\n"
      "latency gpu rm2 1 400 500\nload gpu rm2 1 40 50\n"
      "latency small rm2 1 900\n"
      "capacity small rm2 350000 800 30 40\n"
      "exec_hist rm2 app0 0 1000 0.5 0.5\n");
}

std::vector<ComposedModel> ThreeModels() {
  return {{.name = "img", .variants = {"small"}, .slo = Millis(300), .suite = 0, .origin = "m[0]"},
          {.name = "txt", .suite = 1, .origin = "m[1]"},
          {.name = "rec", .slo = Millis(400), .suite = 2, .origin = "m[2]"}};
}

TEST(SuiteCompositionTest, ModelsFromThreeSuitesShareTheUnitedHardware) {
  const ProfileSuite image = Image(), text = Text(), rec = Rec();
  auto s = ComposeSuite({&image, &text, &rec}, ThreeModels());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // cpu once (the two suites agree on it), then rec-suite's two types.
  ASSERT_EQ(s->hardware().size(), 3u);
  EXPECT_EQ(s->hardware()[0].name, "cpu");
  EXPECT_EQ(s->hardware()[1].name, "gpu");
  EXPECT_EQ(s->hardware()[2].name, "small");
  EXPECT_DOUBLE_EQ(s->hardware()[1].price_per_hour, 0.526);
  EXPECT_EQ(s->hardware()[2].cores, 2);
  EXPECT_EQ(s->name(), "image-suite+text-suite+rec-suite");
  // A task per model, with its SLO (given, else its suite's task's) and input spec.
  ASSERT_EQ(s->tasks().size(), 3u);
  EXPECT_EQ(s->tasks()[0].default_slo, Millis(300));
  EXPECT_EQ(s->tasks()[1].default_slo, Millis(100));
  EXPECT_EQ(s->tasks()[2].default_slo, Millis(400));
  EXPECT_EQ(s->tasks()[1].input_datatype, "INT64");
  EXPECT_EQ(s->tasks()[2].input_name, "features");
  ASSERT_EQ(s->variants().size(), 3u);  // img/small, txt/bert, rec/rm2
  const VariantId img = *s->FindVariant("img/small");
  const VariantId txt = *s->FindVariant("txt/bert");
  const VariantId r = *s->FindVariant("rec/rm2");
  EXPECT_FALSE(s->FindVariant("img/big").has_value());
  // Each variant is profiled on its own suite's types only.
  EXPECT_EQ(s->BatchSizes(0, img), (std::vector<int>{1, 4}));
  EXPECT_TRUE(s->BatchSizes(1, img).empty());
  EXPECT_EQ(s->Latency(0, txt, 1)->Max(), Millis(20));
  EXPECT_EQ(s->Latency(1, txt, 1), nullptr);
  EXPECT_EQ(s->Latency(0, r, 1), nullptr);
  EXPECT_EQ(s->Latency(2, r, 1)->Max(), Micros(900));
  EXPECT_EQ(s->ProfiledPairs().size(), 4u);  // (cpu,img) (cpu,txt) (gpu,rec) (small,rec)
  // Kairos' load component and the service time it sums, on the united ids.
  ASSERT_NE(s->LoadLatency(1, r, 1), nullptr);
  EXPECT_EQ(s->ServiceLatency(1, r, 1)->Max(), Micros(550));
  // The samples are shared with the base suite, not copied.
  EXPECT_EQ(s->Latency(1, r, 1)->samples_us().data(), rec.Latency(0, 0, 1)->samples_us().data());
  // Capacity points move to the united hardware id; histograms to the composed variant.
  ASSERT_EQ(s->capacity_points().size(), 1u);  // img has no `big`, the other one
  EXPECT_EQ(s->capacity_points()[0].hardware, 2u);
  EXPECT_EQ(s->capacity_points()[0].variant, r);
  ASSERT_EQ(s->exec_histograms().size(), 1u);
  EXPECT_EQ(s->exec_histograms()[0].variant, r);
}

TEST(SuiteCompositionTest, OneSuiteKeepsItsHardwareAndName) {
  const ProfileSuite rec = Rec(), image = Image();
  // A base no model comes from adds nothing.
  auto s = ComposeSuite({&image, &rec}, {{.name = "a", .suite = 1, .origin = "m[0]"}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name(), "rec-suite");
  ASSERT_EQ(s->hardware().size(), 2u);
  EXPECT_EQ(s->hardware()[0].name, "gpu");
  EXPECT_EQ(s->capacity_points()[0].hardware, 1u);
}

TEST(SuiteCompositionTest, ASharedTypeThatDiffersIsAnErrorNamingBothSuitesAndTheField) {
  const ProfileSuite image = Image(), rec = Rec();
  struct Case {
    std::string hardware;
    std::string expected;
  } cases[] = {
      {"hardware cpu 0.2 4 15",
       "m[1].suite: hardware type 'cpu' has price_per_hour 0.2 in suite other but 0.19 in suite "
       "image-suite"},
      {"hardware cpu 0.19 8 15", "has cores 8 in suite other but 4 in suite image-suite"},
      {"hardware cpu 0.19 4 30", "has memory_gb 30 in suite other but 15 in suite image-suite"},
  };
  for (const Case& c : cases) {
    const ProfileSuite other =
        Parse("sloserve-profile 1\nsuite other\nprovenance test\ntask t 1000 input FP32 -1\n" +
              c.hardware + "\nvariant v t 0 1 0\nlatency cpu v 1 10\n");
    auto s = ComposeSuite({&image, &other, &rec}, {{.name = "a", .suite = 0, .origin = "m[0]"},
                                                   {.name = "b", .suite = 1, .origin = "m[1]"},
                                                   {.name = "c", .suite = 2, .origin = "m[2]"}});
    ASSERT_FALSE(s.ok()) << c.hardware;
    EXPECT_NE(s.status().message().find(c.expected), std::string::npos)
        << s.status().message() << "\n  expected: " << c.expected;
  }
}

TEST(SuiteCompositionTest, ErrorsNameTheModelAndItsSuite) {
  const ProfileSuite image = Image(), rec = Rec();
  auto s =
      ComposeSuite({&image, &rec}, {{.name = "a", .suite = 0, .origin = "m[0]"},
                                    {.name = "b", .task = "rn2", .suite = 1, .origin = "m[1]"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(
                "m[1].task: 'rn2' is not a task of suite rec-suite (did you mean 'rm2'?"),
            std::string::npos)
      << s.status().message();
  s = ComposeSuite({&image, &rec},
                   {{.name = "a", .variants = {"rm2"}, .suite = 0, .origin = "m[0]"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("m[0].variants: 'rm2' is not a variant of task 'image' of "
                                      "suite image-suite"),
            std::string::npos)
      << s.status().message();
  // Two models of one name, even from two suites.
  s = ComposeSuite({&image, &rec}, {{.name = "a", .suite = 0, .origin = "m[0]"},
                                    {.name = "a", .suite = 1, .origin = "m[1]"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("m[1].name: 'a' names two models"), std::string::npos);
}

}  // namespace
}  // namespace sloserve
