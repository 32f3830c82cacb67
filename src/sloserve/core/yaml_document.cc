#include "sloserve/core/yaml_document.h"

#include <map>
#include <string>
#include <vector>

namespace sloserve {
namespace {

std::string Where(const std::string& origin, const YAML::Mark& m) {
  return origin + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// Whether the quoted scalar opening at `start` (a ' or ") is closed before the end of
// `text`, by YAML's escapes: \x in double quotes, '' in single quotes.
bool QuoteClosed(std::string_view text, size_t start) {
  const char quote = text[start];
  for (size_t i = start + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;
      } else {
        return true;
      }
    }
  }
  return false;
}

Status Check(const YAML::Node& node, std::string_view text, const std::string& origin) {
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : node) {
      RETURN_IF_ERROR(Check(kv.first, text, origin));
      if (kv.first.IsScalar()) {
        const auto [it, first] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
        if (!first) {
          return InvalidArgumentError(Where(origin, kv.first.Mark()) + ": key '" +
                                      kv.first.Scalar() + "' given twice (first at line " +
                                      std::to_string(it->second.line + 1) + ")");
        }
      }
      RETURN_IF_ERROR(Check(kv.second, text, origin));
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) RETURN_IF_ERROR(Check(item, text, origin));
  } else if (node.IsScalar() && node.Mark().pos >= 0) {
    const auto start = static_cast<size_t>(node.Mark().pos);
    if (start < text.size() && (text[start] == '"' || text[start] == '\'') &&
        !QuoteClosed(text, start)) {
      return InvalidArgumentError(Where(origin, node.Mark()) +
                                  ": a quoted string is not closed (no " +
                                  std::string(1, text[start]) + " before the end of the file)");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<YAML::Node> LoadYamlDocument(std::string_view text, const std::string& origin) {
  YAML::Node root;
  try {
    // A second document (after `---`) would be dropped unread: refused, as an unknown key is.
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    for (size_t i = 1; i < documents.size(); ++i) {
      if (documents[i].IsNull()) continue;  // a trailing `---` with nothing after it
      return InvalidArgumentError(Where(origin, documents[i].Mark()) +
                                  ": a second YAML document (after '---'): a config is one "
                                  "document");
    }
    if (!documents.empty()) root = documents.front();
    RETURN_IF_ERROR(Check(root, text, origin));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(Where(origin, e.mark) + ": " + e.msg);
  }
  return root;
}

}  // namespace sloserve
