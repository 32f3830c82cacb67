#include "sloserve/core/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace sloserve {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows of the dynamic-programming table: i-2, i-1, i.
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.empty()) return "";
  const std::string lname = Lower(name);
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  const std::string* best = nullptr;
  size_t best_d = 0;
  for (const std::string& c : candidates) {
    if (c == name || c.empty()) continue;
    const std::string lc = Lower(c);
    size_t d = EditDistance(lname, lc);
    bool ok = d <= limit && d < std::min(name.size(), c.size());
    if (size_t dot = lc.rfind('.'); dot != std::string::npos && dot + 1 < lc.size()) {
      const std::string_view last = std::string_view(lc).substr(dot + 1);
      const size_t dl = EditDistance(lname, last);
      if (dl <= limit && dl < std::min(name.size(), last.size()) && (!ok || dl < d)) {
        d = dl;
        ok = true;
      }
    }
    if (ok && (best == nullptr || d < best_d)) {
      best = &c;
      best_d = d;
    }
  }
  if (best) return *best;
  // No near miss: a name of 4+ characters that starts exactly one candidate
  // ("violation" -> "violation_rate").
  if (name.size() < 4) return "";
  for (const std::string& c : candidates) {
    if (c.size() <= name.size() || Lower(c).rfind(lname, 0) != 0) continue;
    if (best) return "";  // ambiguous
    best = &c;
  }
  return best ? *best : "";
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string best = ClosestName(name, candidates);
  return best.empty() ? "" : "did you mean '" + best + "'? ";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace sloserve
