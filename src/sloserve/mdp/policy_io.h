#pragma once
// Text form of policies and policy sets (format: docs/ramsis-mdp.md#policy-files), and
// the readable table `sloserve policy show` prints.
#include <string>
#include <vector>

#include "sloserve/mdp/policy.h"

namespace sloserve::mdp {

// One policy block ("policy 1" ... "end"). ParsePolicyText(WritePolicyText(p)) == p.
std::string WritePolicyText(const Policy& policy);
// A set: header, key line, count, then one block per policy.
std::string WritePolicySetText(const std::string& set_key, const std::vector<Policy>& set);

struct PolicySetFile {
  std::string set_key;
  std::vector<Policy> policies;
};
// Errors name the origin and line.
StatusOr<PolicySetFile> ParsePolicySetText(const std::string& text, const std::string& origin);

// Rows = queue length 1..N (and "full"), columns = slack levels (merged into runs of equal
// columns), cells = "<variant-abbrev>/<batch>", plus a legend. `max_columns` caps width.
std::string FormatPolicyTable(const Policy& policy, int max_columns = 24);
// One line: load, expected accuracy and violation, overload flag.
std::string SummarizePolicy(const Policy& policy);

}  // namespace sloserve::mdp
