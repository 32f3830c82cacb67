#include "sloserve/config/suite_resolver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sloserve/config/hardware_prices.h"
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

std::vector<std::string> RunSuiteNames(const RunSpec& spec) {
  std::vector<std::string> names;
  for (const ModelSpec& m : spec.models) {
    if (m.suite.empty()) {
      names.push_back(spec.suite);
      break;
    }
  }
  for (const ModelSpec& m : spec.models) {
    if (!m.suite.empty() && std::find(names.begin(), names.end(), m.suite) == names.end())
      names.push_back(m.suite);
  }
  return names;
}

std::vector<ComposedModel> ComposedModelsOf(const RunSpec& spec) {
  const std::vector<std::string> suites = RunSuiteNames(spec);
  std::vector<ComposedModel> out;
  for (const ModelSpec& m : spec.models) {
    const std::string& suite = m.suite.empty() ? spec.suite : m.suite;
    const size_t index =
        static_cast<size_t>(std::find(suites.begin(), suites.end(), suite) - suites.begin());
    out.push_back({.name = m.name,
                   .task = m.task,
                   .variants = m.variants,
                   .slo = m.slo,
                   .suite = index,
                   .origin = m.origin});
  }
  return out;
}

namespace {

// The base suites of a multi-model run, in RunSuiteNames order; a suite a model names
// that does not load is that model's error.
StatusOr<std::vector<ProfileSuite>> LoadModelSuites(const RunSpec& spec) {
  std::vector<ProfileSuite> out;
  for (const std::string& name : RunSuiteNames(spec)) {
    StatusOr<ProfileSuite> s = ResolveSuite(name);
    if (!s.ok() && name != spec.suite) {
      for (const ModelSpec& m : spec.models) {
        if (m.suite == name) return s.status().WithPrefix("'" + m.origin + ".suite'");
      }
    }
    if (!s.ok()) return s.status();
    out.push_back(*std::move(s));
  }
  return out;
}

}  // namespace

StatusOr<ProfileSuite> ResolveRunSuite(const RunSpec& spec) {
  if (spec.models.empty()) {
    ASSIGN_OR_RETURN(ProfileSuite suite, ResolveSuite(spec.suite));
    RETURN_IF_ERROR(ApplyHardwarePrices(spec.hardware_prices, {&suite}));
    return suite;
  }
  ASSIGN_OR_RETURN(std::vector<ProfileSuite> bases, LoadModelSuites(spec));
  std::vector<ProfileSuite*> stated;
  std::vector<const ProfileSuite*> from;
  for (ProfileSuite& b : bases) {
    stated.push_back(&b);
    from.push_back(&b);
  }
  // Before composing: a stated price settles what two suites recorded differently.
  RETURN_IF_ERROR(ApplyHardwarePrices(spec.hardware_prices, stated));
  ASSIGN_OR_RETURN(ProfileSuite suite, ComposeSuite(from, ComposedModelsOf(spec)));
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
  for (const auto& [type, price] : spec.hardware_prices) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", price);
    key += "\nprice\t" + type + "\t" + buf;
  }
  for (const ModelSpec& m : spec.models) {
    key += "\n" + m.name + "\t" + m.suite + "\t" + m.task + "\t" + std::to_string(m.slo.count());
    for (const std::string& v : m.variants) key += "\t" + v;
  }
  return key;
}

}  // namespace sloserve
