#include "sloserve/server/unknown_parameters.h"

#include <algorithm>
#include <vector>

namespace sloserve {
namespace {

constexpr std::string_view kKnown[] = {"slo_ms", "app", "priority", "binary_data_output"};

// Levenshtein distance, case-insensitive (names are short; a quadratic table is fine).
size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

bool IsKnownRequestParameter(std::string_view name) {
  return std::find(std::begin(kKnown), std::end(kKnown), name) != std::end(kKnown);
}

std::string UnknownParameterWarning(std::string_view name) {
  // Shown as given, but bounded: a key can be up to the JSON string limit.
  std::string shown(name.substr(0, 64));
  if (name.size() > 64) shown += "...";
  std::string_view best;
  size_t best_distance = 0;
  for (std::string_view known : kKnown) {
    // A prefix ("slo" of "slo_ms") or a few edits ("slo-ms", "priorty") is close.
    const bool prefix = name.size() >= 2 && known.substr(0, name.size()) == name;
    const size_t d = prefix ? 1 : EditDistance(name.substr(0, 64), known);
    if (d <= std::max<size_t>(2, known.size() / 3) && (best.empty() || d < best_distance)) {
      best = known;
      best_distance = d;
    }
  }
  std::string out = "unknown parameter '" + shown + "' ignored";
  if (!best.empty()) return out + " (did you mean '" + std::string(best) + "'?)";
  return out + " (known: slo_ms, app, priority, binary_data_output)";
}

}  // namespace sloserve
