// `forecaster: lstm` in the simulator (issue 12): InfAdapter planning with the committed
// LSTM (models/forecast/twitter_lstm.pt) on 15 minutes of the bursty Twitter window, against
// the same planner with the last-value and moving-maximum forecasters. The LSTM's
// forecasts must under-provision (forecast below the next minute's peak arrival rate)
// less than half as often as last_value's and not notably more often than moving_max's,
// without buying that by over-provisioning, and its run must not violate the SLO more
// than last_value's. (Measured: under-provisioned 0.21 / 0.71 / 0.29 of 28 solves,
// violations 0.3% / 6.4% / 3.7% for lstm / last_value / moving_max.) The config names the model by
// a path relative to the config file (a copy in a temporary folder), and a missing file is refused
// naming `lstm_model`. Each run takes well under a second.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "policy/infadapter_bursty_yaml.h"
#include "sloserve/config/experiment_config.h"
#include "sloserve/engine/engine.h"
#include "sloserve/policy/planning/infadapter_planning.h"
#include "sloserve/sim/simulation.h"
#include "sloserve/torch/lstm_forecaster.h"
#include "support/test_suite.h"

namespace sloserve {
namespace {

namespace fs = std::filesystem;

// A folder holding a copy of the committed model, as a config's neighbour.
std::string ConfigDirWithModel() {
  const fs::path dir = fs::path(::testing::TempDir()) / "lstm_sim_test";
  fs::create_directories(dir);
  fs::copy_file(fs::path(SLOSERVE_SOURCE_DIR) / "models/forecast/twitter_lstm.pt",
                dir / "twitter_lstm.pt", fs::copy_options::overwrite_existing);
  return dir.string();
}

// bursty_window.yaml cut to 300..1200 s: steady load, the spike at about 630 s and the
// decline. `forecaster_options` goes into the policy line.
StatusOr<RunSpec> BurstyRun(const std::string& forecaster_options) {
  const std::string yaml = testing::InfAdapterBurstyYaml(
      300, 1200, "variant: resnet50, planning: infadapter, " + forecaster_options);
  ASSIGN_OR_RETURN(ExperimentConfig config,
                   ParseExperimentConfig(yaml, ConfigDirWithModel() + "/lstm_sim.yaml"));
  ASSIGN_OR_RETURN(std::vector<RunSpec> runs, ExpandRuns(config));
  if (runs.size() != 1) return InternalError("expected one run");
  return runs.front();
}

struct Outcome {
  double violation_rate = 0;
  double underprovisioned = 0;    // share of solves whose forecast < the next minute's peak
  double mean_overprovision = 0;  // mean forecast / next minute's peak
  int solves = 0;
};

StatusOr<Outcome> SimulateWith(const std::string& forecaster_options) {
  RegisterLstmForecaster();
  ASSIGN_OR_RETURN(RunSpec spec, BurstyRun(forecaster_options));
  const Engine* engine = nullptr;
  std::vector<InfAdapterPlanning::Solve> solves;
  std::map<int64_t, int> arrivals_per_second;  // since the run's start
  TimePoint last{};
  SimHooks hooks;
  hooks.on_engine = [&](const Engine& e) { engine = &e; };
  hooks.on_record = [&](const QueryRecord& r) {
    ++arrivals_per_second[static_cast<int64_t>(ToSeconds(r.arrival.time_since_epoch()))];
    last = std::max(last, r.arrival);
    const auto* p = dynamic_cast<const InfAdapterPlanning*>(engine->planning());
    if (p != nullptr && p->solves().size() != solves.size()) solves = p->solves();
  };
  ASSIGN_OR_RETURN(RunResult result,
                   RunSimulation(spec, testing::EmbeddedSuite("infadapter-resnet"), hooks));
  Outcome o;
  o.violation_rate = result.summary.violation_rate;
  double over = 0;
  for (const auto& s : solves) {
    // The forecast's target: the largest per-second rate of the next minute.
    const auto from = static_cast<int64_t>(ToSeconds(s.at.time_since_epoch()));
    if (from + 60 > static_cast<int64_t>(ToSeconds(last.time_since_epoch()))) break;
    int peak = 0;
    for (auto it = arrivals_per_second.lower_bound(from);
         it != arrivals_per_second.end() && it->first < from + 60; ++it) {
      peak = std::max(peak, it->second);
    }
    if (peak == 0) continue;
    ++o.solves;
    o.underprovisioned += s.forecast_rps < peak;
    over += s.forecast_rps / peak;
  }
  if (o.solves == 0) return InternalError("no solve with a full minute after it");
  o.underprovisioned /= o.solves;
  o.mean_overprovision = over / o.solves;
  return o;
}

TEST(LstmSimTest, ForecastsUnderProvisionLessThanLastValue) {
  auto lstm = SimulateWith("forecaster: lstm, lstm_model: twitter_lstm.pt");
  ASSERT_TRUE(lstm.ok()) << lstm.status().ToString();
  auto last_value = SimulateWith("forecaster: last_value");
  ASSERT_TRUE(last_value.ok()) << last_value.status().ToString();
  auto moving_max = SimulateWith("forecaster: moving_max");
  ASSERT_TRUE(moving_max.ok()) << moving_max.status().ToString();
  for (const auto& [name, o] : {std::pair{"lstm", *lstm}, std::pair{"last_value", *last_value},
                                std::pair{"moving_max", *moving_max}}) {
    RecordProperty(std::string(name) + "_underprovisioned", std::to_string(o.underprovisioned));
    std::printf("%-10s solves %d  under-provisioned %.3f  forecast/peak %.3f  violations %.4f\n",
                name, o.solves, o.underprovisioned, o.mean_overprovision, o.violation_rate);
  }
  EXPECT_GE(lstm->solves, 20);
  // last_value trails a rising load; the LSTM, trained on other days, should not.
  EXPECT_GT(last_value->underprovisioned, 0.0) << "the window has rising load";
  EXPECT_LT(lstm->underprovisioned, 0.5 * last_value->underprovisioned);
  EXPECT_LE(lstm->underprovisioned, moving_max->underprovisioned + 0.1);
  // ... without provisioning far above the peak to get there (moving_max's margin plus
  // its window already are; 1.5 leaves room, a runaway forecast does not pass).
  EXPECT_LT(lstm->mean_overprovision, 1.5);
  EXPECT_LE(lstm->violation_rate, last_value->violation_rate + 0.01);
}

TEST(LstmSimTest, MissingModelNextToTheConfigIsRefusedNamingTheKey) {
  RegisterLstmForecaster();
  auto spec = BurstyRun("forecaster: lstm, lstm_model: no_such_lstm.pt");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto r = RunSimulation(*spec, testing::EmbeddedSuite("infadapter-resnet"), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'lstm_model': 'no_such_lstm.pt' is not a file"),
            std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace sloserve
