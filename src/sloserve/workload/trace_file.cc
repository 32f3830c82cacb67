#include "sloserve/workload/trace_file.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "sloserve/core/declared_key.h"
#include "sloserve/core/embedded_files.h"

namespace sloserve {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// Iterates the lines of `text`, handing each non-blank, non-comment line (1-based number)
// to `fn`, which returns a Status; stops at the first error.
template <typename Fn>
Status ForEachDataLine(std::string_view text, Fn&& fn) {
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t first = 0;
    while (first < line.size() && IsSpace(line[first])) ++first;
    if (first == line.size() || line[first] == '#') continue;
    RETURN_IF_ERROR(fn(line, line_no));
  }
  return OkStatus();
}

// Splits off the next whitespace-delimited token from `rest` (empty when none left).
std::string_view NextToken(std::string_view& rest) {
  size_t b = 0;
  while (b < rest.size() && IsSpace(rest[b])) ++b;
  size_t e = b;
  while (e < rest.size() && !IsSpace(rest[e])) ++e;
  std::string_view tok = rest.substr(b, e - b);
  rest = rest.substr(e);
  return tok;
}

bool ParseDouble(std::string_view tok, double& out) {
  return ParseNumberToken(tok, out);
}

std::string Where(std::string_view name, int64_t line_no) {
  return std::string(name) + ":" + std::to_string(line_no) + ": ";
}

}  // namespace

double RateSeries::ExpectedCount() const {
  double sum = 0.0;
  for (double r : rates_qps) sum += r;
  return sum * ToSeconds(step);
}

double RateSeries::MeanQps() const {
  if (rates_qps.empty()) return 0.0;
  return ExpectedCount() / ToSeconds(Span());
}

StatusOr<std::string> ReadTextFile(const std::string& path) {
  return ReadFileOrEmbedded(path, "trace file");
}

StatusOr<RateSeries> ParseQpsIntervalTrace(std::string_view text, std::string_view name) {
  std::vector<double> starts_s;
  RateSeries series;
  Status st = ForEachDataLine(text, [&](std::string_view line, int64_t line_no) -> Status {
    std::string_view rest = line;
    std::string_view t_tok = NextToken(rest);
    std::string_view v_tok = NextToken(rest);
    std::string_view extra = NextToken(rest);
    double t = 0.0;
    double v = 0.0;
    // The line is described, not quoted: a path that names another file (e.g.
    // /proc/self/environ) must not print its content.
    if (v_tok.empty() || !extra.empty()) {
      return InvalidArgumentError(
          Where(name, line_no) + "expected '<seconds> <value>' (two numbers), got " +
          std::string(v_tok.empty() ? "one field" : "more than two fields"));
    }
    if (!ParseDouble(t_tok, t) || !ParseDouble(v_tok, v)) {
      return InvalidArgumentError(Where(name, line_no) + "expected '<seconds> <value>', but the " +
                                  (ParseDouble(t_tok, t) ? "value" : "seconds") +
                                  " field is not a number");
    }
    if (v < 0) {
      return InvalidArgumentError(Where(name, line_no) + "negative rate " + std::string(v_tok));
    }
    if (!starts_s.empty()) {
      const double step = starts_s.size() >= 2 ? starts_s[1] - starts_s[0] : t - starts_s[0];
      if (t <= starts_s.back()) {
        return InvalidArgumentError(Where(name, line_no) + "interval start " + std::string(t_tok) +
                                    " s is not after the previous one");
      }
      const double expected = starts_s.back() + step;
      if (std::abs(t - expected) > 1e-6 * std::max(1.0, std::abs(step))) {
        return InvalidArgumentError(Where(name, line_no) + "interval start " + std::string(t_tok) +
                                    " s breaks the even spacing of " + std::to_string(step) + " s");
      }
    }
    starts_s.push_back(t);
    series.rates_qps.push_back(v);
    return OkStatus();
  });
  RETURN_IF_ERROR(st);
  if (series.rates_qps.empty()) {
    return InvalidArgumentError(std::string(name) + ": trace has no data lines");
  }
  if (starts_s.size() == 1) {
    return InvalidArgumentError(std::string(name) +
                                ": trace needs at least two lines to define its interval");
  }
  series.step = SecondsF(starts_s[1] - starts_s[0]);
  if (series.step <= Duration(0)) {
    return InvalidArgumentError(std::string(name) + ": interval shorter than 1 microsecond");
  }
  return series;
}

StatusOr<RateSeries> ParseRpsTrace(std::string_view text, std::string_view name) {
  RateSeries series;
  series.step = Seconds(1);
  series.rates_qps.reserve(text.size() / 3);
  Status st = ForEachDataLine(text, [&](std::string_view line, int64_t line_no) -> Status {
    std::string_view rest = line;
    int field = 1;  // the field is named by position, not quoted (see above)
    for (std::string_view tok = NextToken(rest); !tok.empty(); tok = NextToken(rest)) {
      int64_t v = 0;
      if (!ParseIntegerToken(tok, v) || v < 0) {
        return InvalidArgumentError(Where(name, line_no) + "field " + std::to_string(field) +
                                    " is not a non-negative integer requests-per-second");
      }
      ++field;
      series.rates_qps.push_back(static_cast<double>(v));
    }
    return OkStatus();
  });
  RETURN_IF_ERROR(st);
  if (series.rates_qps.empty()) {
    return InvalidArgumentError(std::string(name) + ": trace has no data");
  }
  series.rates_qps.shrink_to_fit();
  return series;
}

StatusOr<RateSeries> LoadQpsIntervalTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseQpsIntervalTrace(text, path);
}

StatusOr<RateSeries> LoadRpsTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseRpsTrace(text, path);
}

}  // namespace sloserve
