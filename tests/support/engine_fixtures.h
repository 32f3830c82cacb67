#pragma once
// Small builders the engine tests share: named workers, a policy set from names, and a
// query due a given time from now. Inline in one header (not copied per test file), so
// the unity build, which compiles test files together, sees one definition.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/query.h"
#include "sloserve/engine/engine.h"
#include "sloserve/policy/policy_spec.h"

namespace sloserve::testing {

// n workers named w0, w1, ...
inline std::vector<WorkerSpec> Workers(int n) {
  std::vector<WorkerSpec> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[static_cast<size_t>(i)].name = "w" + std::to_string(i);
  return w;
}

inline PolicySet Policies(const std::string& dispatch, const std::string& batching,
                          std::map<std::string, std::string> options = {}) {
  PolicySpec spec;
  spec.dispatch = dispatch;
  spec.batching = batching;
  spec.options = std::move(options);
  auto set = MakePolicySet(spec);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return std::move(set).value();
}

// A query arriving at `now` with deadline now + slo.
inline Query At(TimePoint now, Duration slo) {
  Query q;
  q.deadline = now + slo;
  return q;
}

}  // namespace sloserve::testing
