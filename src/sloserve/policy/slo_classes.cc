#include "sloserve/policy/slo_classes.h"

#include <optional>
#include <sstream>
#include <string_view>

#include "sloserve/core/declared_key.h"

namespace sloserve {

StatusOr<std::vector<SloClass>> ParseSloClasses(const std::string& text, size_t total_workers) {
  std::vector<SloClass> classes;
  std::stringstream ss(text);
  size_t next = 0;
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t colon = item.find(':');
    const std::string_view view(item);
    const std::optional<double> slo_ms =
        colon == std::string::npos ? std::nullopt : ParseNumber(view.substr(0, colon));
    const std::optional<int64_t> count =
        colon == std::string::npos ? std::nullopt : ParseInteger(view.substr(colon + 1));
    // slo_ms bounded (a day) before MillisF: 1e300 or inf overflowed it (issue 37).
    if (!slo_ms || !count || !(*slo_ms > 0 && *slo_ms <= 86'400'000) || *count <= 0) {
      return InvalidArgumentError("option 'slo_workers': expected slo_ms:workers,..., got \"" +
                                  text + "\"");
    }
    classes.push_back({MillisF(*slo_ms), next, static_cast<size_t>(*count)});
    next += static_cast<size_t>(*count);
  }
  if (classes.empty()) return InvalidArgumentError("option 'slo_workers' is empty");
  if (next != total_workers) {
    return InvalidArgumentError("option 'slo_workers' assigns " + std::to_string(next) +
                                " workers but the deployment has " + std::to_string(total_workers));
  }
  return classes;
}

size_t NearestSloClass(const std::vector<SloClass>& classes, Duration slo) {
  size_t best = 0;
  for (size_t i = 1; i < classes.size(); ++i) {
    Duration d = classes[i].slo > slo ? classes[i].slo - slo : slo - classes[i].slo;
    Duration b = classes[best].slo > slo ? classes[best].slo - slo : slo - classes[best].slo;
    if (d < b) best = i;
  }
  return best;
}

}  // namespace sloserve
