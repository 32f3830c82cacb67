#pragma once
// Pieces of Prometheus' text exposition format shared by the /metrics writers.
#include <string>
#include <string_view>

namespace sloserve {

// A label value as the format quotes it: backslash, double quote and newline escaped.
inline void AppendPrometheusLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace sloserve
