#include "sloserve/policy/planning/instance_configs.h"

#include <cmath>
#include <sstream>

#include "sloserve/core/declared_key.h"

namespace sloserve {
namespace {

// Prices are sums of a few decimals: compare with a small tolerance so a configuration
// costing exactly the budget stays in.
constexpr double kCostEps = 1e-9;

void Enumerate(const ConfigSpace& s, size_t type, InstanceCounts* c, double cost,
               std::vector<InstanceCounts>* out) {
  if (type == s.price.size()) {
    bool any = false;
    for (int n : *c) any |= n > 0;
    if (any) out->push_back(*c);
    return;
  }
  for (int n = s.min_count[type]; n <= s.max_count[type]; ++n) {
    const double total = cost + n * s.price[type];
    if (total > s.budget + kCostEps) break;
    (*c)[type] = n;
    Enumerate(s, type + 1, c, total, out);
  }
  (*c)[type] = 0;
}

}  // namespace

double ConfigSpace::Cost(const InstanceCounts& c) const {
  double cost = 0;
  for (size_t i = 0; i < c.size() && i < price.size(); ++i) cost += c[i] * price[i];
  return cost;
}

bool ConfigSpace::Contains(const InstanceCounts& c) const {
  if (c.size() != price.size()) return false;
  bool any = false;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] < min_count[i] || c[i] > max_count[i]) return false;
    any |= c[i] > 0;
  }
  return any && Cost(c) <= budget + kCostEps;
}

StatusOr<ConfigSpace> MakeConfigSpace(const ProfileSuite& suite, double budget,
                                      const std::string& max_counts) {
  ConfigSpace s;
  s.budget = budget;
  double cheapest = INFINITY;
  for (const HardwareSpec& h : suite.hardware()) {
    if (!(h.price_per_hour > 0)) {
      return InvalidArgumentError("hardware '" + h.name +
                                  "' has no positive price: cannot plan under a cost budget");
    }
    s.names.push_back(h.name);
    s.price.push_back(h.price_per_hour);
    s.max_count.push_back(static_cast<int>(std::floor(budget / h.price_per_hour + kCostEps)));
    cheapest = std::min(cheapest, h.price_per_hour);
  }
  s.min_count.assign(s.price.size(), 0);
  if (!(budget >= cheapest)) {
    std::ostringstream m;
    m << "budget " << budget << " $/h is below the cheapest instance (" << cheapest << " $/h)";
    return InvalidArgumentError(m.str());
  }
  std::stringstream ss(max_counts);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos)
      return InvalidArgumentError("max instances: expected type:count, got '" + item + "'");
    const std::string type = item.substr(0, colon);
    auto hw = suite.FindHardware(type);
    if (!hw) return NotFoundError("max instances: hardware '" + type + "' not in the suite");
    const std::optional<int64_t> n = ParseInteger(std::string_view(item).substr(colon + 1));
    if (!n || *n < 0)
      return InvalidArgumentError("max instances: '" + item + "' needs a count >= 0");
    s.max_count[*hw] = static_cast<int>(std::min<int64_t>(s.max_count[*hw], *n));
  }
  return s;
}

std::vector<InstanceCounts> EnumerateConfigs(const ConfigSpace& space) {
  std::vector<InstanceCounts> out;
  InstanceCounts c(space.price.size(), 0);
  Enumerate(space, 0, &c, 0, &out);
  return out;
}

bool IsSubConfig(const InstanceCounts& a, const InstanceCounts& b) {
  if (a.size() != b.size()) return false;
  bool smaller = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    smaller |= a[i] < b[i];
  }
  return smaller;
}

std::string FormatMix(const ConfigSpace& space, const InstanceCounts& c) {
  std::string out;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == 0) continue;
    if (!out.empty()) out += ",";
    out += space.names[i] + ":" + std::to_string(c[i]);
  }
  return out;
}

std::string FormatCounts(const InstanceCounts& c) {
  std::string out = "(";
  for (size_t i = 0; i < c.size(); ++i) out += (i ? "," : "") + std::to_string(c[i]);
  return out + ")";
}

}  // namespace sloserve
