#pragma once
// `hardware_prices:` in a config: the price of each hardware type, in $/h, stated as an
// assumption of the experiment (`hardware_prices: {c220g5: 1.53, v100: 3.06}`). It
// replaces the price the profile suite recorded, which some suites leave at 0 or took in
// another year; the engine's cost accounting then reads the stated one. A mapping whose
// keys are hardware names: flattened like any other section, to one declared key per type
// ("hardware_prices.g4dn.xlarge", the type being all that follows the prefix).
#include <map>
#include <string>
#include <vector>

#include "sloserve/config/flat_config.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

// $/h by hardware type name.
using HardwarePrices = std::map<std::string, double>;

inline constexpr char kHardwarePricesPrefix[] = "hardware_prices.";
// The declaration every "hardware_prices.TYPE" key shares, named "hardware_prices.<type>".
const KeyDecl& HardwarePriceKey();
// "hardware_prices.TYPE" with a non-empty TYPE.
bool IsHardwarePriceKey(const std::string& key);

// The prices a flat config states (none when it has no hardware_prices.* key), each
// checked against the declaration (a finite number >= 0).
StatusOr<HardwarePrices> HardwarePricesFromFlat(const FlatConfig& flat);

// Sets each stated price on every suite that has the type (a run composed from several
// suites may have it in more than one). A type none of them has is an error naming the
// key, with a did-you-mean and the types there are.
Status ApplyHardwarePrices(const HardwarePrices& prices, const std::vector<ProfileSuite*>& suites);

}  // namespace sloserve
