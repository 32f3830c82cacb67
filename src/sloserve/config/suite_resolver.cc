#include "sloserve/config/suite_resolver.h"

#include <cstdlib>
#include <sstream>

#include "sloserve/core/declared_key.h"
#include "sloserve/engine/deployment.h"
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

std::vector<ComposedModel> ComposedModelsOf(const RunSpec& spec) {
  std::vector<ComposedModel> out;
  for (const ModelSpec& m : spec.models) {
    out.push_back(
        {.name = m.name, .task = m.task, .variants = m.variants, .slo = m.slo, .origin = m.origin});
  }
  return out;
}

StatusOr<ProfileSuite> ResolveRunSuite(const RunSpec& spec) {
  ASSIGN_OR_RETURN(ProfileSuite base, ResolveSuite(spec.suite));
  if (spec.models.empty()) return base;
  ASSIGN_OR_RETURN(ProfileSuite suite, ComposeSuite(base, ComposedModelsOf(spec)));
  // Each model's SLO (its task's default in the composed suite) against its fastest
  // variant on the pool: the single-model check, once per model.
  for (const ModelSpec& m : spec.models) {
    DeploymentSpec d = DeploymentSpecOf(spec);
    d.task = m.name;
    d.slo = Duration(0);
    d.preload = "none";  // checked once, below, with every model's variants in the suite
    if (StatusOr<Deployment> dep = ResolveDeployment(suite, d); !dep.ok())
      return dep.status().WithPrefix("'" + m.origin + "' (model " + m.name + ")");
  }
  return suite;
}

std::string RunSuiteKey(const RunSpec& spec) {
  std::string key = spec.suite;
  for (const ModelSpec& m : spec.models) {
    key += "\n" + m.name + "\t" + m.task + "\t" + std::to_string(m.slo.count());
    for (const std::string& v : m.variants) key += "\t" + v;
  }
  return key;
}

}  // namespace sloserve
