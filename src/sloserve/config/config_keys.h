#pragma once
// Every key a config file may hold, from the declarations: a run's keys (run_config.h),
// the policy's names and each policy's options (the policy registry), `plan`'s and
// `serve`'s (server_config.h). config check, the JSON Schema and docs/config.md read
// this list; so does the parser, to refuse unknown keys with a did-you-mean.
#include <string>
#include <vector>

#include "sloserve/core/declared_key.h"

namespace sloserve {

struct KeySection {
  std::string title;  // "Deployment and workload", "Server", ...
  std::vector<KeyDecl> keys;
};

// Keys grouped for docs/config.md; policy options named "policy.<option>", the keys of a
// `models:` entry "models[].<key>" (they are not top-level keys: FindConfigKey and
// ConfigKeyNames leave them out).
inline constexpr char kModelEntryPrefix[] = "models[].";
bool IsModelEntryKeyName(const std::string& name);
const std::vector<KeySection>& ConfigSections();
// The declaration of a dotted key ("workload.load_qps", "policy.variant",
// "hardware_prices.v100": every type's price shares one), or null.
const KeyDecl* FindConfigKey(const std::string& key);
// Every dotted key name, in section order (for did-you-mean).
const std::vector<std::string>& ConfigKeyNames();

// The registered policies of a kind ("dispatch", "batching", "selection", "placement",
// "planning"), by name; null for another word.
const std::vector<std::string>* PolicyNamesOfKind(const std::string& kind);

}  // namespace sloserve
