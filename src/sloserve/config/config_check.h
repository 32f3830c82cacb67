#pragma once
// `sloserve config check`: every error of a config file at once, each with the place it
// was written (file:line:column), the key and a did-you-mean, from the declarations.
#include <string>
#include <vector>

namespace sloserve {

struct ConfigDiagnostic {
  std::string file;
  int line = 0;  // 1-based; 0 = the file as a whole (e.g. a rule across keys)
  int column = 0;
  std::string key;  // "" = not about one key
  std::string message;
};

// "file:line:col: key: message" (parts that are unknown left out).
std::string FormatDiagnostic(const ConfigDiagnostic& d);
std::vector<ConfigDiagnostic> CheckConfigText(const std::string& yaml_text,
                                              const std::string& origin);
std::vector<ConfigDiagnostic> CheckConfigFile(const std::string& path);

}  // namespace sloserve
