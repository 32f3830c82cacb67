// `sloserve config check FILE... | schema | reference`: the declared configuration's
// tools (docs/config.md).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "sloserve/config/config_check.h"
#include "sloserve/config/config_schema.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace config_cmd {

const std::vector<FlagSpec> kFlags = {{"json", "", "check: print the errors as JSON"},
                                      {"help", "", "show this help"}};

void PrintHelp() {
  std::printf(
      "usage: sloserve config check FILE... [--json]\n"
      "       sloserve config schema\n"
      "       sloserve config reference\n\n"
      "The configuration of sim and serve is declared: every key has a type, a default, a\n"
      "unit, a range or choices and a description (docs/config.md).\n\n"
      "  check      report every error of each file at once: file:line:column, the key,\n"
      "             and a did-you-mean; exit status 1 when any\n"
      "  schema     print a JSON Schema (draft 2020-12) of the config file, for editors and\n"
      "             CI (e.g. python3 -m jsonschema, or the YAML language server)\n"
      "  reference  print the tables of docs/config.md (Markdown)\n\n"
      "options:\n%s\nexample: sloserve config check experiments/orloj/*.yaml\n",
      FlagsHelp(kFlags).c_str());
}

Status Check(const std::vector<std::string>& files, bool json) {
  if (files.empty()) return InvalidArgumentError("check: expected one or more FILE arguments");
  size_t errors = 0, bad_files = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& file : files) {
    const std::vector<ConfigDiagnostic> found = CheckConfigFile(file);
    errors += found.size();
    bad_files += found.empty() ? 0 : 1;
    for (const ConfigDiagnostic& d : found) {
      if (json) {
        out.push_back({{"file", d.file},
                       {"line", d.line},
                       {"column", d.column},
                       {"key", d.key},
                       {"message", d.message}});
      } else {
        std::printf("%s\n", FormatDiagnostic(d).c_str());
      }
    }
  }
  if (json) {
    std::cout << nlohmann::json{{"files", files.size()}, {"errors", out}}.dump(2) << std::endl;
  } else if (errors == 0) {
    std::printf("%zu file%s OK\n", files.size(), files.size() == 1 ? "" : "s");
  }
  if (errors > 0) {
    return InvalidArgumentError(std::to_string(errors) + " error" + (errors == 1 ? "" : "s") +
                                " in " + std::to_string(bad_files) + " of " +
                                std::to_string(files.size()) + " file" +
                                (files.size() == 1 ? "" : "s"));
  }
  return OkStatus();
}

Status Run(const Args& args) {
  const std::vector<std::string>& pos = args.positionals();
  if (pos.empty()) return InvalidArgumentError("expected check, schema or reference (see -h)");
  const std::string& what = pos[0];
  const std::vector<std::string> rest(pos.begin() + 1, pos.end());
  if (what == "check") return Check(rest, args.Has("json"));
  if (!rest.empty()) return InvalidArgumentError(what + ": takes no arguments");
  if (what == "schema") {
    std::cout << ConfigJsonSchema();
    return OkStatus();
  }
  if (what == "reference") {
    std::cout << ConfigReferenceMarkdown();
    return OkStatus();
  }
  return InvalidArgumentError("unknown subcommand '" + what +
                              "' (expected check, schema or reference)");
}

}  // namespace config_cmd

int ConfigCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("config", argv, config_cmd::kFlags, config_cmd::PrintHelp, config_cmd::Run);
}

}  // namespace sloserve::cli
