#include "sloserve/grpc/protobuf_log.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <mutex>  // std::call_once

#include "sloserve/core/mutex.h"

namespace sloserve::grpc_protocol {
namespace {

constexpr size_t kMaxMessageBytes = 512;

const char* LevelName(google::protobuf::LogLevel level) {
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      return "INFO";
    case google::protobuf::LOGLEVEL_WARNING:
      return "WARNING";
    case google::protobuf::LOGLEVEL_ERROR:
      return "ERROR";
    default:
      return "FATAL";
  }
}

Mutex mu;
LogRateLimit limit GUARDED_BY(mu);

void Handle(google::protobuf::LogLevel level, const char* filename, int line,
            const std::string& message) {
  int64_t left_out = 0;
  if (level < google::protobuf::LOGLEVEL_FATAL) {
    MutexLock lock(mu);
    if (!limit.Admit(std::chrono::steady_clock::now(), &left_out)) return;
  }
  const std::string shown = message.substr(0, kMaxMessageBytes);
  std::fprintf(stderr, "sloserve: libprotobuf %s %s:%d: %s", LevelName(level), filename, line,
               shown.c_str());
  if (left_out > 0) {
    std::fprintf(stderr, " (%lld earlier messages left out: at most %d a minute)",
                 static_cast<long long>(left_out), kProtobufLogBurst);
  }
  std::fputc('\n', stderr);
}

}  // namespace

bool LogRateLimit::Admit(std::chrono::steady_clock::time_point now, int64_t* left_out) {
  if (printed_ == 0 || now - window_start_ >= kProtobufLogWindow) {
    window_start_ = now;
    printed_ = 0;
  }
  if (printed_ >= kProtobufLogBurst) {
    ++left_out_;
    return false;
  }
  ++printed_;
  *left_out = left_out_;
  left_out_ = 0;
  return true;
}

void RouteProtobufLog() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&Handle); });
}

}  // namespace sloserve::grpc_protocol
