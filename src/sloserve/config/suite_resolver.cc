#include "sloserve/config/suite_resolver.h"

#include <cstdlib>
#include <sstream>

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
    char* end = nullptr;
    o.accuracy_step = std::strtod(parts[1].c_str(), &end);
    if (parts[1].empty() || *end != '\0' || o.accuracy_step <= 0) {
      return InvalidArgumentError("suite '" + name + "': STEP must be a positive number");
    }
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
