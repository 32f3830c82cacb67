#pragma once
// The standard process series of Prometheus' client libraries (process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
// process_max_fds, process_start_time_seconds), read from /proc/self, and
// sloserve_build_info{version, revision} = 1, so dashboards can join on the build.
#include <string>

namespace sloserve {

struct BuildInfo {
  std::string version;   // e.g. "0.1.0"
  std::string revision;  // git revision of the build ("unknown" when not built from git)
};

// The series in the Prometheus text format; a /proc file that cannot be read leaves its
// series out (never a made-up value).
std::string RenderProcessMetrics(const BuildInfo& build);

}  // namespace sloserve
