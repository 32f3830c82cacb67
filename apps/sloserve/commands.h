#pragma once
// The subcommands of the sloserve CLI. Each takes its arguments (after the subcommand
// name) and returns the process exit code; errors are printed as one line on stderr.
#include <string>
#include <vector>

namespace sloserve::cli {

int SimCommand(const std::vector<std::string>& args);
int ServeCommand(const std::vector<std::string>& args);
int LoadgenCommand(const std::vector<std::string>& args);
int DemoCommand(const std::vector<std::string>& args);
int PoliciesCommand(const std::vector<std::string>& args);
int ProfileCommand(const std::vector<std::string>& args);
int ReportCommand(const std::vector<std::string>& args);
int PolicyCommand(const std::vector<std::string>& args);
int KairosCommand(const std::vector<std::string>& args);
int PlanCommand(const std::vector<std::string>& args);
int PlanInfAdapterCommand(const std::vector<std::string>& args);  // plan infadapter
int WorkerCommand(const std::vector<std::string>& args);
int ForecastCommand(const std::vector<std::string>& args);
int ConfigCommand(const std::vector<std::string>& args);  // config check|schema|reference

}  // namespace sloserve::cli
