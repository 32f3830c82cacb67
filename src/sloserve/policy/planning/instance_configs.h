#pragma once
// The configuration space of heterogeneous planning (Kairos, HPDC'23, section 5.2): a
// configuration is a count of instances per hardware type; the space is every
// configuration whose hourly cost is within a budget and whose counts are within
// per-type maxima. Shared by the upper bound, the similarity pick and the searches.
#include <string>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

// Instances per hardware type, indexed like ProfileSuite::hardware().
using InstanceCounts = std::vector<int>;

struct ConfigSpace {
  std::vector<std::string> names;  // hardware type names, by HardwareId
  std::vector<double> price;       // $/h per instance, by HardwareId
  std::vector<int> max_count;      // per-type maximum
  double budget = 2.5;             // $/h
  // Types that must have at least one instance (Kairos: the base type, the only one
  // meeting QoS for every query size; the artifact skips configurations without it).
  std::vector<int> min_count;

  double Cost(const InstanceCounts& c) const;
  bool Contains(const InstanceCounts& c) const;
};

// Builds the space over every hardware type of the suite. `max_counts` is
// "type:n,type:n"; a type it does not name gets floor(budget / price). Errors: unknown
// types, a budget below the cheapest instance, non-positive prices.
StatusOr<ConfigSpace> MakeConfigSpace(const ProfileSuite& suite, double budget,
                                      const std::string& max_counts);

// Every configuration of the space (not the empty one), in lexicographic order of the
// counts.
std::vector<InstanceCounts> EnumerateConfigs(const ConfigSpace& space);

// True when `a` can become `b` by adding instances (a <= b per type, a != b): the
// sub-configuration relation of Kairos+' pruning.
bool IsSubConfig(const InstanceCounts& a, const InstanceCounts& b);

// "g4dn.xlarge:1,r5n.large:13" (types with a zero count left out): the `hardware` key of
// experiment configs.
std::string FormatMix(const ConfigSpace& space, const InstanceCounts& c);
// "(1,0,13,0)": compact form for tables.
std::string FormatCounts(const InstanceCounts& c);

}  // namespace sloserve
