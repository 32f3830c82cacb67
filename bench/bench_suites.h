#pragma once
// Embedded profile suites for benchmarks, loaded once; a missing suite aborts the run.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "sloserve/profile/profile.h"

namespace sloserve::bench {

inline const ProfileSuite& Suite(const std::string& name) {
  static std::map<std::string, ProfileSuite>* loaded = new std::map<std::string, ProfileSuite>();
  auto it = loaded->find(name);
  if (it != loaded->end()) return it->second;
  auto s = LoadSuite(name);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    std::abort();
  }
  return loaded->emplace(name, std::move(s).value()).first->second;
}

}  // namespace sloserve::bench
