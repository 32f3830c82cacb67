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

// A document marker ("---" or "..." at the start of a line; block scalars are indented,
// so none is content) followed by content, after the first document's content: a second
// document, which YAML::Load drops unread. Refused, as an unknown key is.
Status CheckOneDocument(std::string_view text, const std::string& origin) {
  auto has_content = [](std::string_view s) {
    const size_t first = s.find_first_not_of(" \t\r");
    return first != std::string_view::npos && s[first] != '#';
  };
  bool content = false;  // the first document has begun
  int marker_line = 0;   // a marker after it (1-based; 0: none)
  int line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    const bool marker = (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0) &&
                        (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    const bool second = marker ? content && has_content(line.substr(3))
                               : marker_line != 0 && has_content(line) && line[0] != '%';
    if (second) {
      return InvalidArgumentError(origin + ":" + std::to_string(line_no) +
                                  ":1: a second YAML document (after '---' on line " +
                                  std::to_string(marker ? line_no : marker_line) +
                                  "): a config is one document");
    }
    if (marker) {
      if (content && marker_line == 0) marker_line = line_no;
      content = content || has_content(line.substr(3));  // "--- {a: 1}" begins the first
    } else if (has_content(line) && line[0] != '%') {
      content = true;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<YAML::Node> LoadYamlDocument(std::string_view text, const std::string& origin) {
  YAML::Node root;
  try {
    // One document: yaml-cpp's LoadAll can run without end on malformed input (the config
    // fuzzer found one), so a second document is found in the text instead (below).
    root = YAML::Load(std::string(text));
    RETURN_IF_ERROR(Check(root, text, origin));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(Where(origin, e.mark) + ": " + e.msg);
  }
  RETURN_IF_ERROR(CheckOneDocument(text, origin));
  return root;
}

}  // namespace sloserve
