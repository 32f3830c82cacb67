// `sloserve forecast eval`: InfAdapter's load forecasters (last_value, moving_max, ewma,
// and the LSTM in builds with LibTorch) scored on a per-second rate trace: MAPE and
// under-prediction rate of "the largest rate of the next minute" from the last 10
// minutes (docs/infadapter.md, "Forecaster").
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/core/embedded_files.h"
#include "sloserve/planner/forecast_evaluation.h"
#include "sloserve/policy/planning/load_forecaster.h"
#include "sloserve/workload/trace_file.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace forecast_cmd {

const std::vector<FlagSpec> kFlags = {
    {"trace", "FILE", "per-second rates, whitespace-separated (e.g. twitter_rps_per_second.txt)"},
    {"start-s", "S", "first trace second of the scored range (default 0)"},
    {"end-s", "S", "one past its last second (default: the trace's end)"},
    {"trace-offset-s", "S",
     "the dataset second of the trace's first line, for the LSTM's held-out check (default: "
     "the 'seconds [A, B)' of the trace's provenance header, e.g. the embedded day-15 traces; "
     "else 0)"},
    {"forecasters", "LIST", "comma-separated (default last_value,moving_max,ewma,lstm)"},
    {"lstm-model", "FILE", "lstm's TorchScript file (default models/forecast/twitter_lstm.pt)"},
    {"window-s", "N", "moving_max's window (default 60, as the planners)"},
    {"ewma-alpha", "X", "ewma's smoothing (default 0.1, as the planners)"},
    {"margin", "X",
     "the planners' scaling 1 + X, for the under-prediction rate with it (default 0.1)"},
    {"history-s", "N", "seconds of history each forecast sees (default 600)"},
    {"horizon-s", "N", "forecast the largest rate of this many next seconds (default 60)"},
    {"stride-s", "N", "seconds between scored windows (default 60)"},
    {"json", "", "print JSON"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve forecast eval --trace FILE [options]\n\n"
      "Scores load forecasters as InfAdapter's planner uses them: every --stride-s seconds\n"
      "of [--start-s, --end-s), a forecaster sees the last --history-s seconds of rates and\n"
      "predicts the largest rate of the next --horizon-s seconds. Prints per forecaster the\n"
      "MAPE, the share of windows under-predicted (without and with --margin) and the mean\n"
      "shortfall. Windows never reach outside the range, so a held-out range is scored on\n"
      "its own data. `lstm` needs a build with LibTorch. docs/infadapter.md.\n\n"
      "options:\n%s"
      "\nexample (the days the LSTM was not trained on):\n"
      "  sloserve forecast eval --trace ../shared/datasets/infadapter/twitter_rps_per_second.txt "
      "\\\n"
      "      --start-s 1209600 --json\n",
      FlagsHelp(kFlags).c_str());
}

// The dataset second a trace cut from the dataset starts at, from its provenance header
// ("# provenance: datasets/... seconds [1296000, 1382400) = day 15 ..."); 0 without one.
int64_t OffsetFromHeader(std::string_view text) {
  const std::string first(text.substr(0, text.find('\n')));
  if (first.rfind("#", 0) != 0) return 0;
  std::smatch m;
  static const std::regex kSeconds(R"(seconds \[(\d+), \d+\))");
  if (!std::regex_search(first, m, kSeconds)) return 0;
  return ParseInteger(m[1].str()).value_or(0);
}

// The RPS-per-second trace format every command reads (comments, embedded traces), from
// the trace's text (read once: a pipe gives it once, and its header is read too).
StatusOr<std::vector<double>> ParseRates(std::string_view text, const std::string& path) {
  StatusOr<RateSeries> series = ParseRpsTrace(text, path);
  if (!series.ok()) return series.status().WithPrefix("--trace");
  if (series->rates_qps.empty())
    return InvalidArgumentError("--trace: '" + path + "' has no rates");
  return std::move(series->rates_qps);
}

Status Run(const Args& args) {
  if (args.positionals().size() != 1 || args.positionals()[0] != "eval") {
    return InvalidArgumentError("expected: eval --trace FILE (see sloserve forecast --help)");
  }
  if (!args.Has("trace")) return InvalidArgumentError("--trace FILE is required");
  StatusOr<std::string> text = ReadFileOrEmbedded(args.Get("trace"), "trace file");
  if (!text.ok()) return text.status().WithPrefix("--trace");
  ASSIGN_OR_RETURN(std::vector<double> rates, ParseRates(*text, args.Get("trace")));
  ForecastEvalOptions eval;
  ASSIGN_OR_RETURN(eval.begin_s, args.GetInt("start-s", 0));
  ASSIGN_OR_RETURN(eval.end_s, args.GetInt("end-s", -1));
  ASSIGN_OR_RETURN(eval.trace_offset_s,
                   args.GetIntIn("trace-offset-s", OffsetFromHeader(*text), {0, 1e12}));
  ASSIGN_OR_RETURN(int64_t history, args.GetInt("history-s", 600));
  ASSIGN_OR_RETURN(int64_t horizon, args.GetInt("horizon-s", 60));
  ASSIGN_OR_RETURN(int64_t stride, args.GetInt("stride-s", 60));
  ASSIGN_OR_RETURN(eval.margin, args.GetDouble("margin", 0.1));
  for (auto [flag, v] :
       {std::pair{"--history-s", history}, {"--horizon-s", horizon}, {"--stride-s", stride}}) {
    if (v < 1 || v > 86400) return InvalidArgumentError(std::string(flag) + " must be 1..86400");
  }
  if (!(eval.margin >= 0 && eval.margin <= 10))
    return InvalidArgumentError("--margin must be 0..10");
  eval.history_s = static_cast<int>(history);
  eval.horizon_s = static_cast<int>(horizon);
  eval.stride_s = static_cast<int>(stride);
  ForecasterOptions base;
  ASSIGN_OR_RETURN(int64_t window, args.GetInt("window-s", 60));
  if (window < 1 || window > 86400) return InvalidArgumentError("--window-s must be 1..86400");
  base.window_s = static_cast<int>(window);
  ASSIGN_OR_RETURN(base.ewma_alpha, args.GetDouble("ewma-alpha", 0.1));
  base.model_path = args.Get("lstm-model", base.model_path);
  std::vector<std::string> kinds;
  std::stringstream list(args.Get("forecasters", "last_value,moving_max,ewma,lstm"));
  for (std::string k; std::getline(list, k, ',');) {
    if (!k.empty()) kinds.push_back(k);
  }
  if (kinds.empty()) return InvalidArgumentError("--forecasters: the list is empty");

  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& kind : kinds) {
    ForecasterOptions o = base;
    o.kind = kind;
    auto forecaster = MakeLoadForecaster(o);
    if (!forecaster.ok()) {
      return InvalidArgumentError("--forecasters: " + std::string(forecaster.status().message()));
    }
    auto score = EvaluateLoadForecaster(**forecaster, rates, eval);
    if (!score.ok()) return InvalidArgumentError(std::string(score.status().message()));
    rows.push_back({{"forecaster", kind},
                    {"windows", score->windows},
                    {"mape_percent", score->mape_percent},
                    {"under_percent", score->under_percent},
                    {"under_with_margin_percent", score->under_with_margin_percent},
                    {"mean_under_rps", score->mean_under_rps},
                    {"mean_forecast_rps", score->mean_forecast_rps},
                    {"mean_actual_rps", score->mean_actual_rps}});
  }
  const int64_t end = eval.end_s < 0 ? static_cast<int64_t>(rates.size()) : eval.end_s;
  if (args.Has("json")) {
    nlohmann::json out = {{"trace", args.Get("trace")},
                          {"start_s", eval.begin_s},
                          {"end_s", end},
                          {"history_s", eval.history_s},
                          {"horizon_s", eval.horizon_s},
                          {"stride_s", eval.stride_s},
                          {"margin", eval.margin},
                          {"window_s", base.window_s},
                          {"ewma_alpha", base.ewma_alpha},
                          {"rows", rows}};
    if (std::find(kinds.begin(), kinds.end(), "lstm") != kinds.end()) {
      out["lstm_model"] = base.model_path;
    }
    std::cout << out.dump(2) << "\n";
    return OkStatus();
  }
  std::printf(
      "trace seconds [%lld, %lld): largest rate of the next %d s from the last %d s, every %d s\n",
      static_cast<long long>(eval.begin_s), static_cast<long long>(end), eval.horizon_s,
      eval.history_s, eval.stride_s);
  std::printf("%-12s %8s %8s %9s %12s %10s %10s %10s\n", "forecaster", "windows", "MAPE%", "under%",
              "under+m%", "short rps", "mean fc", "mean act");
  for (const auto& r : rows) {
    std::printf("%-12s %8lld %8.2f %9.2f %12.2f %10.2f %10.2f %10.2f\n",
                r["forecaster"].get<std::string>().c_str(), r["windows"].get<long long>(),
                r["mape_percent"].get<double>(), r["under_percent"].get<double>(),
                r["under_with_margin_percent"].get<double>(), r["mean_under_rps"].get<double>(),
                r["mean_forecast_rps"].get<double>(), r["mean_actual_rps"].get<double>());
  }
  std::printf(
      "(under+m: under-predicted after the margin %.2f; short rps: mean shortfall when under)\n",
      eval.margin);
  return OkStatus();
}

}  // namespace forecast_cmd

int ForecastCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("forecast", argv, forecast_cmd::kFlags, forecast_cmd::PrintHelp,
                       forecast_cmd::Run, 1);
}

}  // namespace sloserve::cli
