#include "sloserve/config/hardware_prices.h"

#include <algorithm>

#include "sloserve/core/did_you_mean.h"

namespace sloserve {
const KeyDecl& HardwarePriceKey() {
  // Built on first use: RunKeys() and the config sections, in other files, point at it.
  static const KeyDecl key{.name = std::string(kHardwarePricesPrefix) + "<type>",
                           .type = KeyType::kNumber,
                           .unit = "$/h",
                           .min = 0,
                           .max = 1e6,
                           .help =
                               "the price of the hardware type named after the dot, a "
                               "stated assumption replacing the suite's (cost reads it)"};
  return key;
}

bool IsHardwarePriceKey(const std::string& key) {
  const std::string prefix = kHardwarePricesPrefix;
  return key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0;
}

StatusOr<HardwarePrices> HardwarePricesFromFlat(const FlatConfig& flat) {
  HardwarePrices out;
  for (auto it = flat.lower_bound(kHardwarePricesPrefix);
       it != flat.end() && IsHardwarePriceKey(it->first); ++it) {
    if (it->second.empty()) continue;  // `type:` with no value: unset
    ASSIGN_OR_RETURN(double price,
                     NumberValue(HardwarePriceKey(), it->second, "'" + it->first + "'"));
    out[it->first.substr(std::string(kHardwarePricesPrefix).size())] = price;
  }
  return out;
}

Status ApplyHardwarePrices(const HardwarePrices& prices, const std::vector<ProfileSuite*>& suites) {
  for (const auto& [type, price] : prices) {
    bool found = false;
    for (ProfileSuite* s : suites) {
      if (const std::optional<HardwareId> hw = s->FindHardware(type)) {
        s->SetHardwarePrice(*hw, price);
        found = true;
      }
    }
    if (found) continue;
    std::vector<std::string> types;
    std::string where;
    for (const ProfileSuite* s : suites) {
      where += (where.empty() ? "" : ", ") + s->name();
      for (const HardwareSpec& h : s->hardware()) {
        if (std::find(types.begin(), types.end(), h.name) == types.end()) types.push_back(h.name);
      }
    }
    return NotFoundError("'" + std::string(kHardwarePricesPrefix) + type + "': '" + type +
                         "' is not a hardware type of the run's suite" +
                         (suites.size() > 1 ? "s " : " ") + where + " (" + DidYouMean(type, types) +
                         "types: " + JoinNames(types) + ")");
  }
  return OkStatus();
}

}  // namespace sloserve
