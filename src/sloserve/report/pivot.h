#pragma once
// Turns result rows (sim --json `rows`) into a pivot: one line per x value, one column
// per series, one metric per table/plot. Rows can be filtered first, as the papers do
// (e.g. RAMSIS counts only points with violation_rate < 0.05).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sloserve/core/status.h"
#include "sloserve/report/svg_plot.h"

namespace sloserve {

struct RowFilter {
  std::string key;
  std::string op;  // < <= > >= = !=
  std::string value;
};
// "violation_rate<0.05", "policy=ramsis" -> filter; errors name the expression.
StatusOr<RowFilter> ParseRowFilter(const std::string& expr);
bool RowPasses(const nlohmann::json& row, const RowFilter& f);
// Every field name of the rows (the union, sorted).
std::vector<std::string> RowFields(const std::vector<nlohmann::json>& rows);
// Fails unless some row has field `key`, naming the flag that used it and the fields:
// "--where: unknown field 'violation' (did you mean 'violation_rate'? fields: ...)".
// No rows: nothing to check against, OK.
Status CheckRowField(const std::vector<nlohmann::json>& rows, const std::string& key,
                     const std::string& flag);

// The spread of one cell's repeated runs (seeds).
struct CellSpread {
  int n = 0;
  double min = 0, max = 0;
  double sd = 0;  // sample standard deviation (0 for one run)
};

struct Pivot {
  std::string x_key, y_key, series_key;
  std::vector<double> xs;                                       // sorted distinct x
  std::vector<std::string> series;                              // in first-seen order
  std::map<std::pair<std::string, double>, double> cells;       // (series, x) -> mean y
  std::map<std::pair<std::string, double>, CellSpread> spread;  // (series, x) -> its runs
};

StatusOr<Pivot> BuildPivot(const std::vector<nlohmann::json>& rows, const std::string& x_key,
                           const std::string& y_key, const std::string& series_key);
std::string PivotMarkdown(const Pivot& p);

// Resource saving (RAMSIS section 7.1): with x = workers and y = accuracy, for every
// point (x_b, y_b) of each baseline series, the fewest x at which `method` reaches at
// least y_b (within 0.01); saving = 1 - x_method / x_b. Points never matched are omitted.
struct Saving {
  std::string baseline;
  double baseline_x = 0, baseline_y = 0;
  double method_x = 0, method_y = 0;
  double saving = 0;
};
std::vector<Saving> ResourceSavings(const Pivot& accuracy_by_workers, const std::string& method);
std::string SavingsMarkdown(const std::vector<Saving>& savings, const std::string& method);
// Error bars over a cell's repeated runs: none, their min-max, or the 95% confidence
// interval of the mean (Student's t). Cells of one run get none.
enum class ErrorBars { kNone, kMinMax, kCi95 };
StatusOr<ErrorBars> ParseErrorBars(const std::string& name);  // none | minmax | ci95
std::vector<PlotSeries> PivotSeries(const Pivot& p, ErrorBars bars = ErrorBars::kMinMax);

}  // namespace sloserve
