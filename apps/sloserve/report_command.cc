// `sloserve report RESULTS.json ...`: tables and SVG plots from `sloserve sim --json`.
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <system_error>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/core/did_you_mean.h"
#include "sloserve/core/read_file.h"
#include "sloserve/report/pivot.h"

extern char** environ;

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
    {"xlabel", "TEXT",
     "x axis label (default: the field's name and unit, e.g. 'offered load (queries/s)')"},
    {"ylabel", "TEXT", "y axis label (default: each metric's name and unit)"},
    {"logy", "", "logarithmic y axis (points at y <= 0 are left out, with a warning)"},
    {"hline", "VALUE[:LABEL]",
     "a dashed reference line at y = VALUE (repeatable); latency plots (*_ms) get one at the "
     "rows' SLO by default"},
    {"no-slo-line", "", "leave out the default SLO line of latency plots"},
    {"bars", "none|minmax|ci95",
     "error bars where several runs (seeds) share a point: their min-max (default) or the 95% "
     "confidence interval of the mean"},
    {"size", "WxH", "plot size in pixels (default 720x440)"},
    {"png", "", "also write <metric>.png (needs rsvg-convert: Debian package librsvg2-bin)"},
    {"json", "", "print the pivots as JSON instead of Markdown"},
    {"help", "", "show this help"},
};

struct Look {
  PlotOptions base;
  ErrorBars bars = ErrorBars::kMinMax;
  std::vector<ReferenceLine> hlines;
  bool slo_line = true;
  bool png = false;
};

StatusOr<Look> ParseLook(const Args& args) {
  Look l;
  ASSIGN_OR_RETURN(l.bars, ParseErrorBars(args.Get("bars", "minmax")));
  l.base.log_y = args.Has("logy");
  l.slo_line = !args.Has("no-slo-line");
  l.png = args.Has("png");
  for (const std::string& h : args.GetAll("hline")) {
    const size_t colon = h.find(':');
    ReferenceLine line;
    ASSIGN_OR_RETURN(line.y, ParseFlagNumber("hline", h.substr(0, colon)));
    if (colon != std::string::npos) line.label = h.substr(colon + 1);
    l.hlines.push_back(line);
  }
  if (args.Has("size")) {
    const std::string size = args.Get("size");
    const size_t x = size.find('x');
    if (x == std::string::npos) return InvalidArgumentError("--size: expected WxH, e.g. 900x500");
    ASSIGN_OR_RETURN(double w, ParseFlagNumber("size", size.substr(0, x)));
    ASSIGN_OR_RETURN(double h, ParseFlagNumber("size", size.substr(x + 1)));
    if (w != std::floor(w) || h != std::floor(h) || w < 240 || w > 4000 || h < 160 || h > 4000)
      return InvalidArgumentError("--size: width 240..4000 and height 160..4000 pixels, got " +
                                  size);
    l.base.width = static_cast<int>(w);
    l.base.height = static_cast<int>(h);
  }
  return l;
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The rows' one SLO, if they share one (a latency plot's default reference line).
std::optional<double> SharedSlo(const std::vector<nlohmann::json>& rows) {
  std::optional<double> slo;
  for (const nlohmann::json& row : rows) {
    if (!row.contains("slo_ms") || !row["slo_ms"].is_number()) return std::nullopt;
    const double v = row["slo_ms"].get<double>();
    if (slo && *slo != v) return std::nullopt;
    slo = v;
  }
  return slo;
}

Status WritePng(const std::string& svg_path, const std::string& png_path) {
  pid_t pid = 0;
  const char* argv[] = {"rsvg-convert", "-o", png_path.c_str(), svg_path.c_str(), nullptr};
  if (posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, const_cast<char* const*>(argv),
                   environ) != 0) {
    return FailedPreconditionError(
        "--png: cannot run rsvg-convert (install the Debian package librsvg2-bin)");
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return UnavailableError("--png: rsvg-convert failed on " + svg_path +
                            (WIFEXITED(status) && WEXITSTATUS(status) == 127
                                 ? " (not installed? Debian package librsvg2-bin)"
                                 : ""));
  }
  return OkStatus();
}

// Results are read whole up to this size (a sweep's JSON with --series is tens of MB).
constexpr size_t kMaxResultsBytes = size_t{256} << 20;

// The parsed results, or "PATH: not valid JSON (line L, column C: what is wrong)": the
// position and the parser's reason, without its "last read" quote of the file's bytes
// (a path may name a file whose content must not be printed).
StatusOr<nlohmann::json> ParseResultsJson(const std::string& text, const std::string& path) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    const size_t at = what.find("parse error at ");
    what = at == std::string::npos ? "byte " + std::to_string(e.byte)
                                   : what.substr(at + std::string("parse error at ").size());
    what = what.substr(0, what.find("; last read"));
    return InvalidArgumentError(path + ": not valid JSON (" + what + ")");
  }
}

// --out's directory, made if missing. The error_code overload: the throwing one ended the
// process with an uncaught filesystem_error when DIR was, or lay under, a regular file.
Status CreateOutDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) return UnavailableError("--out: cannot create directory " + dir + ": " + ec.message());
  return OkStatus();
}

void PrintHelp() {
  std::printf(
      "usage: sloserve report RESULTS.json [options]\n\n"
      "Reads the JSON printed by `sloserve sim --json` (a file, or - for stdin) and prints, per\n"
      "metric, a Markdown table (rows = x values, columns = series; repeated seeds are\n"
      "averaged); with --out it also writes one SVG line plot per metric (PNG too with\n"
      "--png): axes labelled with units, min-max bars over seeds, the SLO on latency plots.\n"
      "\noptions:\n%s\n"
      "example: sloserve sim experiments/ramsis/constant_image.yaml --json > r.json\n"
      "         sloserve report r.json --where 'violation_rate<0.05' --out plots/\n"
      "         sloserve report r.json --y p99_ms --logy --hline 150:SLO --out plots/ --png\n",
      FlagsHelp(kFlags).c_str());
}

// --savings names one series of the kept rows; another name compared with nothing (an
// empty table, silently). Checked before anything is printed.
Status CheckSavingsSeries(const std::vector<nlohmann::json>& rows, const std::string& x,
                          const std::string& series, const std::string& method) {
  ASSIGN_OR_RETURN(Pivot acc, BuildPivot(rows, x, "accuracy", series));
  if (std::find(acc.series.begin(), acc.series.end(), method) != acc.series.end())
    return OkStatus();
  return InvalidArgumentError("--savings: '" + method + "' is not a " + series +
                              " of the kept rows (" + DidYouMean(method, acc.series) + "--series " +
                              series + ": " + JoinNames(acc.series) + ")");
}

Status Run(const Args& args) {
  if (args.positionals().size() != 1) return InvalidArgumentError("expected one RESULTS.json");
  const std::string path = args.positionals()[0];
  ASSIGN_OR_RETURN(const std::string text,
                   path == "-" ? ReadStreamBounded(std::cin, path, "results file", kMaxResultsBytes)
                               : ReadFileBounded(path, "results file", kMaxResultsBytes));
  ASSIGN_OR_RETURN(nlohmann::json doc, ParseResultsJson(text, path));
  if (!doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array()) {
    return InvalidArgumentError(path + ": not the JSON of `sloserve sim --json` (no 'rows' list)");
  }
  const std::vector<nlohmann::json> all_rows(doc["rows"].begin(), doc["rows"].end());
  for (size_t i = 0; i < all_rows.size(); ++i) {
    if (!all_rows[i].is_object()) {
      return InvalidArgumentError(path + ": rows[" + std::to_string(i) +
                                  "] is not an object of fields (the JSON of `sloserve sim "
                                  "--json` has one per run)");
    }
  }
  // A field that no row has is a typo (not a filter that removes every row).
  std::vector<RowFilter> filters;
  for (const std::string& w : args.GetAll("where")) {
    StatusOr<RowFilter> f = ParseRowFilter(w);
    if (!f.ok()) return f.status().WithPrefix("--where");
    RETURN_IF_ERROR(CheckRowField(all_rows, f->key, "--where"));
    filters.push_back(*f);
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
  for (std::string y; std::getline(ss, y, ',');) {
    if (y.empty())
      return InvalidArgumentError(
          "--y: an empty metric name (expected KEYS, e.g. "
          "accuracy,violation_rate)");
    ys.push_back(y);
  }
  if (ys.empty()) return InvalidArgumentError("--y: no metric given");
  RETURN_IF_ERROR(CheckRowField(all_rows, x, "--x"));
  RETURN_IF_ERROR(CheckRowField(all_rows, series, "--series"));
  for (const std::string& y : ys) RETURN_IF_ERROR(CheckRowField(all_rows, y, "--y"));
  ASSIGN_OR_RETURN(Look look, ParseLook(args));
  if (rows.empty() && !all_rows.empty()) {
    std::fprintf(stderr,
                 "sloserve report: warning: --where kept none of the %zu rows; the tables and "
                 "plots are empty\n",
                 all_rows.size());
  }
  // get<std::string> of a non-string threw (terminate): only a string names the experiment.
  const std::string title =
      args.Get("title", doc.contains("experiment") && doc["experiment"].is_string()
                            ? doc["experiment"].get<std::string>()
                            : "");
  if (args.Has("savings") && !rows.empty()) {
    RETURN_IF_ERROR(CheckSavingsSeries(rows, x, series, args.Get("savings")));
  }
  if (args.Has("out")) RETURN_IF_ERROR(CreateOutDir(args.Get("out")));
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
      PlotOptions o = look.base;
      o.title = title.empty() ? AxisLabel(y) : title + ": " + AxisLabel(y);
      o.x_label = args.Get("xlabel", AxisLabel(x));
      o.y_label = args.Get("ylabel", AxisLabel(y));
      o.hlines = look.hlines;
      const std::optional<double> slo = SharedSlo(rows);
      if (look.slo_line && y.ends_with("_ms") && y != "slo_ms" && slo)
        o.hlines.push_back({*slo, "SLO " + FormatNumber(*slo) + " ms"});
      const std::string base = (std::filesystem::path(args.Get("out")) / y).string();
      {
        std::ofstream svg(base + ".svg");
        std::ofstream md(base + ".md");
        if (!svg || !md) return UnavailableError("--out: cannot write under " + args.Get("out"));
        const RenderedPlot plot = RenderPlot(PivotSeries(p, look.bars), o);
        if (plot.points_left_out > 0) {
          std::fprintf(stderr,
                       "sloserve report: warning: %s: %d point(s) at y <= 0 left out of the "
                       "log-scale plot\n",
                       y.c_str(), plot.points_left_out);
        }
        svg << plot.svg;
        md << PivotMarkdown(p);
      }
      if (look.png) RETURN_IF_ERROR(WritePng(base + ".svg", base + ".png"));
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
  return RunSubcommand("report", argv, report_cmd::kFlags, report_cmd::PrintHelp, report_cmd::Run,
                       1);
}

}  // namespace sloserve::cli
