#include "sloserve/policy/slo_classes.h"

#include <cstdlib>
#include <sstream>

namespace sloserve {

StatusOr<std::vector<SloClass>> ParseSloClasses(const std::string& text, size_t total_workers) {
  std::vector<SloClass> classes;
  std::stringstream ss(text);
  size_t next = 0;
  for (std::string item; std::getline(ss, item, ',');) {
    size_t colon = item.find(':');
    const std::string head = item.substr(0, colon);  // kept alive: e1 points into it
    char* e1 = nullptr;
    char* e2 = nullptr;
    double slo_ms = std::strtod(head.c_str(), &e1);
    long count = colon == std::string::npos ? 0 : std::strtol(item.c_str() + colon + 1, &e2, 10);
    // slo_ms bounded (a day) before MillisF: 1e300 or inf overflowed it (issue 37).
    if (colon == std::string::npos || *e1 != '\0' || *e2 != '\0' ||
        !(slo_ms > 0 && slo_ms <= 86'400'000) || count <= 0) {
      return InvalidArgumentError("option 'slo_workers': expected slo_ms:workers,..., got \"" +
                                  text + "\"");
    }
    classes.push_back({MillisF(slo_ms), next, static_cast<size_t>(count)});
    next += static_cast<size_t>(count);
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
