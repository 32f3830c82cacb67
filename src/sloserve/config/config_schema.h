#pragma once
// The configuration's JSON Schema (draft 2020-12) and its reference page (docs/config.md),
// both generated from the declarations (config_keys.h), so editors, CI and readers see
// exactly the keys the parser accepts.
#include <string>

namespace sloserve {

// The schema as JSON text (indented).
std::string ConfigJsonSchema();
// The reference tables of docs/config.md, one per section, as Markdown.
std::string ConfigReferenceMarkdown();

}  // namespace sloserve
