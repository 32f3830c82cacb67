// `sloserve report RESULTS.json ...`: tables and SVG plots from `sloserve sim --json`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/report/pivot.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace report_cmd {

const std::vector<FlagSpec> kFlags = {
    {"x", "KEY", "row field on the x axis (default load_qps)"},
    {"y", "KEYS",
     "comma-separated metrics, one table and plot each (default accuracy,violation_rate)"},
    {"series", "KEY", "row field naming the lines (default policy)"},
    {"where", "KEY<op>VALUE", "keep only rows passing, e.g. violation_rate<0.05", true},
    {"out", "DIR", "write <metric>.svg (and <metric>.md) there"},
    {"title", "TEXT", "plot title prefix (default: the experiment name)"},
    {"savings", "SERIES",
     "also print the resource saving of SERIES over the others (x = workers, "
     "y = accuracy: the fewest workers matching each baseline point)"},
    {"json", "", "print the pivots as JSON instead of Markdown"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve report RESULTS.json [options]\n\n"
      "Reads the JSON printed by `sloserve sim --json` (a file, or - for stdin) and prints, per\n"
      "metric, a Markdown table (rows = x values, columns = series; repeated seeds are\n"
      "averaged); with --out it also writes one SVG line plot per metric.\n\noptions:\n%s\n"
      "example: sloserve sim experiments/ramsis/constant_image.yaml --json > r.json\n"
      "         sloserve report r.json --where 'violation_rate<0.05' --out plots/\n",
      FlagsHelp(kFlags).c_str());
}

Status Run(const Args& args) {
  if (args.positionals().size() != 1) return InvalidArgumentError("expected one RESULTS.json");
  const std::string path = args.positionals()[0];
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) return NotFoundError(path + ": cannot open");
    text << in.rdbuf();
  }
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array()) {
    return InvalidArgumentError(path + ": not the JSON of `sloserve sim --json` (no 'rows' list)");
  }
  const std::vector<nlohmann::json> all_rows(doc["rows"].begin(), doc["rows"].end());
  // A field that no row has is a typo (not a filter that removes every row).
  std::vector<RowFilter> filters;
  for (const std::string& w : args.GetAll("where")) {
    ASSIGN_OR_RETURN(RowFilter f, ParseRowFilter(w));
    RETURN_IF_ERROR(CheckRowField(all_rows, f.key, "--where"));
    filters.push_back(f);
  }
  std::vector<nlohmann::json> rows;
  for (const nlohmann::json& row : all_rows) {
    bool keep = true;
    for (const RowFilter& f : filters) keep = keep && RowPasses(row, f);
    if (keep) rows.push_back(row);
  }
  const std::string x = args.Get("x", "load_qps"), series = args.Get("series", "policy");
  std::vector<std::string> ys;
  std::stringstream ss(args.Get("y", "accuracy,violation_rate"));
  for (std::string y; std::getline(ss, y, ',');) ys.push_back(y);
  RETURN_IF_ERROR(CheckRowField(all_rows, x, "--x"));
  RETURN_IF_ERROR(CheckRowField(all_rows, series, "--series"));
  for (const std::string& y : ys) RETURN_IF_ERROR(CheckRowField(all_rows, y, "--y"));
  const std::string title =
      args.Get("title", doc.contains("experiment") ? doc["experiment"].get<std::string>() : "");
  if (args.Has("out")) std::filesystem::create_directories(args.Get("out"));
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& y : ys) {
    ASSIGN_OR_RETURN(Pivot p, BuildPivot(rows, x, y, series));
    if (args.Has("json")) {
      nlohmann::json cells = nlohmann::json::array();
      for (const auto& [key, v] : p.cells)
        cells.push_back({{series, key.first}, {x, key.second}, {y, v}});
      out[y] = cells;
    } else {
      std::printf("%s%s%s (%zu of %zu rows)\n\n%s\n", title.c_str(), title.empty() ? "" : ": ",
                  y.c_str(), rows.size(), doc["rows"].size(), PivotMarkdown(p).c_str());
    }
    if (args.Has("out")) {
      PlotOptions o;
      o.title = title.empty() ? y : title + ": " + y;
      o.x_label = x;
      o.y_label = y;
      const std::string base = (std::filesystem::path(args.Get("out")) / y).string();
      std::ofstream svg(base + ".svg");
      std::ofstream md(base + ".md");
      if (!svg || !md) return UnavailableError("--out: cannot write under " + args.Get("out"));
      svg << RenderLinePlot(PivotSeries(p), o);
      md << PivotMarkdown(p);
    }
  }
  if (args.Has("savings")) {
    ASSIGN_OR_RETURN(Pivot acc, BuildPivot(rows, x, "accuracy", series));
    std::vector<Saving> savings = ResourceSavings(acc, args.Get("savings"));
    if (args.Has("json")) {
      nlohmann::json list = nlohmann::json::array();
      for (const Saving& s : savings) {
        list.push_back({{"baseline", s.baseline},
                        {"baseline_x", s.baseline_x},
                        {"baseline_accuracy", s.baseline_y},
                        {"method_x", s.method_x},
                        {"method_accuracy", s.method_y},
                        {"saving", s.saving}});
      }
      out["savings"] = list;
    } else {
      std::printf("resource saving of %s (same accuracy with fewer %s)\n\n%s\n",
                  args.Get("savings").c_str(), x.c_str(),
                  SavingsMarkdown(savings, args.Get("savings")).c_str());
    }
  }
  if (args.Has("json")) std::cout << out.dump(2) << std::endl;
  return OkStatus();
}

}  // namespace report_cmd

int ReportCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("report", argv, report_cmd::kFlags, report_cmd::PrintHelp, report_cmd::Run);
}

}  // namespace sloserve::cli
