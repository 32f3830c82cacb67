// Deterministic mutation fuzzing (issue 16 item 5) of the parsers that read what clients
// and operators send: the inference request handler (routing, the JSON pre-scan and the
// KServe v2 document), the YAML experiment/serve config loader and the profile parser.
// Each target starts from seed inputs and applies random byte-level mutations (bit
// flips, JSON/YAML-significant bytes, invalid UTF-8, insertions, deletions, duplications,
// splices, truncations) from a fixed seed, so a failure reproduces. Properties: nothing
// crashes or trips a sanitizer; every refusal is an error with a message; every HTTP
// answer is a status 200..599 with a body that is valid JSON.
//   SLOSERVE_FUZZ_ITERATIONS=N  cases per target (default 3000)
//   SLOSERVE_FUZZ_SEED=S        first seed (default 1)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sloserve/config/experiment_config.h"
#include "sloserve/profile/profile.h"
#include "sloserve/server/json_limits.h"
#include "sloserve/server/kserve_handler.h"
#include "support/fake_backend.h"

namespace sloserve {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(SLOSERVE_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  // 1..4 mutations of `input`, sometimes spliced with `other`.
  std::string Mutate(std::string s, const std::string& other) {
    const int n = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < n; ++i) MutateOnce(s, other);
    return s;
  }

 private:
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  void MutateOnce(std::string& s, const std::string& other) {
    static constexpr std::string_view kBytes =
        "{}[]\":,\\-+.eE0123456789 \n\t\r#&*|>!%@'\x00\x01\x1b\x7f\x80\xbf\xc0\xe2\xf0\xf8\xff"
        "ntf";
    static const char* const kTokens[] = {
        "null",         "true",        "1e999",    "-1e999", "NaN",
        "nan",          "inf",         "-0",       "1e-400", "9223372036854775808",
        "\"\\u0000\"",  "\"\\ud800\"", "[[[[[[[[", "]]]]",   "{\"a\":",
        "\xed\xa0\x80", "&a",          "*a",       "- ",     ": ",
        "\n  - x",      "!!binary",    "~"};
    const size_t at = s.empty() ? 0 : Below(s.size() + 1);
    switch (Below(8)) {
      case 0:  // flip a bit
        if (!s.empty()) s[Below(s.size())] ^= static_cast<char>(1u << Below(8));
        break;
      case 1:  // a significant byte replaces one
        if (!s.empty()) s[Below(s.size())] = kBytes[Below(kBytes.size())];
        break;
      case 2:  // insert a significant byte
        s.insert(at, 1, kBytes[Below(kBytes.size())]);
        break;
      case 3:  // insert a token
        s.insert(at, kTokens[Below(std::size(kTokens))]);
        break;
      case 4: {  // delete a range
        const size_t len = Below(std::min<size_t>(s.size() - std::min(at, s.size()), 64) + 1);
        if (at < s.size()) s.erase(at, len);
        break;
      }
      case 5: {  // duplicate a range
        if (at < s.size()) s.insert(at, s.substr(at, Below(256) + 1));
        break;
      }
      case 6: {  // splice a piece of the other seed
        if (other.empty()) break;
        const size_t from = Below(other.size());
        s.insert(at, other.substr(from, Below(128) + 1));
        break;
      }
      default:  // truncate
        s.resize(Below(s.size() + 1));
        break;
    }
  }

  std::mt19937_64 rng_;
};

// Runs `check` on `iterations` mutants of the seeds (round robin), plus the seeds.
template <typename Check>
void Fuzz(const std::vector<std::string>& seeds, Check check) {
  const int64_t iterations = EnvInt("SLOSERVE_FUZZ_ITERATIONS", 3000);
  const auto seed = static_cast<uint64_t>(EnvInt("SLOSERVE_FUZZ_SEED", 1));
  Mutator mutator(seed);
  for (const std::string& s : seeds) check(s);
  for (int64_t i = 0; i < iterations; ++i) {
    const std::string& base = seeds[static_cast<size_t>(i) % seeds.size()];
    const std::string& other = seeds[static_cast<size_t>(i + 1) % seeds.size()];
    const std::string input = mutator.Mutate(base, other);
    SCOPED_TRACE("case " + std::to_string(i) + " (seed " + std::to_string(seed) + ")");
    check(input);
    if (::testing::Test::HasFailure()) return;  // the first failing case is enough
  }
}

void ExpectValidJsonAnswer(const HttpResponse& r, std::string_view input) {
  EXPECT_GE(r.status, 200);
  EXPECT_LE(r.status, 599);
  if (std::string_view(r.content_type) != "application/json") return;
  const auto doc = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded())
      << "invalid JSON answer " << r.body << " to "
      << nlohmann::json(std::string(input))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (r.status >= 400 && !doc.is_discarded()) {
    EXPECT_TRUE(doc.contains("error") && doc["error"].is_string() &&
                !doc["error"].get<std::string>().empty())
        << r.body;
  }
}

TEST(MutationFuzzTest, InferenceRequestBodies) {
  FakeBackend backend;
  KServeHandler handler({}, backend.Tasks(), &backend, nullptr);
  const std::vector<std::string> seeds = {
      R"({"id":"r1","inputs":[{"name":"input","shape":[2,3],"datatype":"FP32","data":[1,2,3,4,5,6]}]})",
      R"({"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[[1.5,-2e3,0]]}],)"
      R"("parameters":{"slo_ms":150,"app":"a\u00e9"},"outputs":[{"name":"output"}]})",
      R"({"inputs":[{"name":"input","shape":[1,3],"datatype":"INT64","data":[1,2,3]}],"id":"x"})",
  };
  int64_t accepted = 0;  // the seeds and some mutants are valid requests
  Fuzz(seeds, [&](const std::string& body) {
    (void)ScanJsonShape(body, JsonLimits{});
    auto routed = handler.Route(HttpMethod::kPost, "/v2/models/image/infer", body);
    if (auto* r = std::get_if<HttpResponse>(&routed)) {
      ExpectValidJsonAnswer(*r, body);
    } else {
      const auto& call = std::get<InferCall>(routed);
      EXPECT_GE(call.request.rows, 1);
      EXPECT_EQ(call.request.task, "image");
      ++accepted;
    }
  });
  EXPECT_GE(accepted, static_cast<int64_t>(seeds.size()));
}

TEST(MutationFuzzTest, RequestTargets) {
  FakeBackend backend;
  KServeHandler handler({}, backend.Tasks(), &backend, nullptr);
  const std::vector<std::string> seeds = {"/v2/models/image", "/v2/models/image/ready",
                                          "/v2/health/ready", "/v2/models/image/versions/1/infer",
                                          "/v2?x=1"};
  Fuzz(seeds, [&](const std::string& target) {
    for (HttpMethod method : {HttpMethod::kGet, HttpMethod::kPost, HttpMethod::kOther}) {
      auto routed = handler.Route(method, target, "{}");
      if (auto* r = std::get_if<HttpResponse>(&routed)) ExpectValidJsonAnswer(*r, target);
    }
  });
}

TEST(MutationFuzzTest, ConfigFiles) {
  const std::vector<std::string> seeds = {ReadSource("examples/serve_image.yaml"),
                                          ReadSource("experiments/foundation/edf_image.yaml")};
  ASSERT_FALSE(seeds[0].empty());
  Fuzz(seeds, [&](const std::string& yaml) {
    auto config = ParseExperimentConfig(yaml, "fuzz.yaml");
    if (!config.ok()) {
      EXPECT_FALSE(config.status().message().empty());
      return;
    }
    auto spec = RunSpecFromFlat(config->base, /*with_workload=*/false);
    if (!spec.ok()) {
      EXPECT_FALSE(spec.status().message().empty());
      return;
    }
    // As `sloserve sim` builds it: an accepted synthetic workload finishes (issue 37:
    // load_qps 1e308 was accepted and drew arrivals at 1 us forever).
    auto run = RunSpecFromFlat(config->base, /*with_workload=*/true);
    if (!run.ok()) {
      EXPECT_FALSE(run.status().message().empty());
      return;
    }
    const ArrivalSpec& a = run->arrival;
    if (a.kind == "poisson" || a.kind == "gamma" || a.kind == "constant") {
      EXPECT_LE(a.rate_qps * ToSeconds(a.horizon), kMaxExpectedArrivals) << yaml;
      auto process = MakeArrivalProcess(a, run->seed);
      ASSERT_TRUE(process.ok()) << process.status().ToString();
      int64_t last = 0;
      for (int i = 0; i < 1'000; ++i) {
        const auto t = (*process)->Next();
        if (!t) break;
        const int64_t us = t->time_since_epoch().count();
        ASSERT_TRUE(us >= 1 && us >= last && us <= a.horizon.count()) << us << "\n" << yaml;
        last = us;
      }
    }
  });
}

TEST(MutationFuzzTest, ProfileFiles) {
  const std::vector<std::string> seeds = {
      ReadSource("experiments/orloj/profiles/bimodal-std0.5.prof"),
      ReadSource("experiments/orloj/profiles/bimodal-std0.5-2.prof")};
  ASSERT_FALSE(seeds[0].empty());
  Fuzz(seeds, [&](const std::string& text) {
    auto suite = ParseProfileText(text, "fuzz.prof");
    if (!suite.ok()) {
      EXPECT_FALSE(suite.status().message().empty());
    }
  });
}

}  // namespace
}  // namespace sloserve
