#pragma once
// A YAML document as sloserve's readers take it (configs, cluster experiments, a model
// repository's config.yaml): yaml-cpp's parse, then what yaml-cpp lets through refused
// with the place it is at:
//   - a quoted scalar left open to the end of the text (yaml-cpp takes the rest of the
//     file as its value: every key after it vanished and the file was accepted);
//   - a key given twice in one mapping (YAML forbids it; yaml-cpp keeps both and a reader
//     looking the key up silently gets one of them).
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "sloserve/core/status.h"

namespace sloserve {

// `origin` names the text in errors ("ORIGIN:LINE:COLUMN: ...").
StatusOr<YAML::Node> LoadYamlDocument(std::string_view text, const std::string& origin);

}  // namespace sloserve
