#include "sloserve/server/json_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "sloserve/server/json_util.h"

namespace sloserve {

void StartJsonLogLine(std::string& out, std::string_view level, std::string_view msg) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char ts[96];  // sized for any int fields, so the format cannot truncate
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms.count()));
  out += "{\"ts\":\"";
  out += ts;
  out += "\",\"level\":";
  AppendJsonString(out, level);
  out += ",\"msg\":";
  AppendJsonString(out, msg);
}

std::string JsonLogLine(std::string_view level, std::string_view msg) {
  std::string out;
  StartJsonLogLine(out, level, msg);
  out += '}';
  return out;
}

}  // namespace sloserve
