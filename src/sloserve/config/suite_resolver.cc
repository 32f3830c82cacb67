#include "sloserve/config/suite_resolver.h"

#include <cstdlib>
#include <sstream>

#include "sloserve/core/declared_key.h"
#include "sloserve/mdp/synthetic.h"

namespace sloserve {

StatusOr<ProfileSuite> ResolveSuite(const std::string& name) {
  const std::string prefix = "synthetic:";
  if (name.rfind(prefix, 0) != 0) return LoadSuite(name);
  std::vector<std::string> parts;
  std::stringstream ss(name.substr(prefix.size()));
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts.empty() || parts[0].empty()) {
    return InvalidArgumentError("suite '" + name + "': expected synthetic:BASE[:STEP[:v1,v2,...]]");
  }
  ASSIGN_OR_RETURN(ProfileSuite base, LoadSuite(parts[0]));
  mdp::SyntheticSuiteOptions o;
  if (parts.size() > 1) {
    const std::optional<double> step = ParseNumber(parts[1]);
    if (!step || *step <= 0) {
      return InvalidArgumentError("suite '" + name + "': STEP must be a positive number");
    }
    o.accuracy_step = *step;
  }
  if (parts.size() > 2) {
    std::stringstream vs(parts[2]);
    for (std::string v; std::getline(vs, v, ',');) o.front.push_back(v);
  } else {
    o.front = mdp::RamsisImageParetoVariants();
  }
  return mdp::MakeSyntheticParetoSuite(base, o);
}

}  // namespace sloserve
