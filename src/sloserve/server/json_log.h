#pragma once
// Structured log lines (`serve --log-format json`): one JSON object per line with the
// time, level and message first, then the caller's fields, so log shippers need no parser
// of sloserve's prose. Rendered by hand (no tree) like the responses.
#include <string>
#include <string_view>

namespace sloserve {

// Starts a line: {"ts":"2026-11-27T04:11:05.123Z","level":"<level>","msg":"<msg>"
// (UTC, milliseconds). Append ",\"key\":value" fields, then "}".
void StartJsonLogLine(std::string& out, std::string_view level, std::string_view msg);

// A complete line with no other fields (no trailing newline).
std::string JsonLogLine(std::string_view level, std::string_view msg);

}  // namespace sloserve
