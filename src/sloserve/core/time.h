#pragma once
// Time in sloserve: integer microseconds, never raw doubles of seconds.
// `TimePoint` is measured from an engine-defined epoch (0 = start of a simulation, or
// the server's start for `serve`), so the same values flow through sim and serve.
#include <chrono>
#include <cstdint>

namespace sloserve {

using Duration = std::chrono::duration<int64_t, std::micro>;

// Tag clock for engine time points; the engine never reads it, it is handed `now`.
struct EngineClock {
  using rep = int64_t;
  using period = std::micro;
  using duration = Duration;
  using time_point = std::chrono::time_point<EngineClock, Duration>;
  static constexpr bool is_steady = true;
};
using TimePoint = EngineClock::time_point;

constexpr Duration Micros(int64_t us) {
  return Duration(us);
}
constexpr Duration Millis(int64_t ms) {
  return Duration(ms * 1000);
}
constexpr Duration Seconds(int64_t s) {
  return Duration(s * 1000000);
}
// Rounds a floating-point number of seconds/milliseconds to microseconds (edges only).
inline Duration SecondsF(double s) {
  return Duration(static_cast<int64_t>(s * 1e6 + (s >= 0 ? 0.5 : -0.5)));
}
inline Duration MillisF(double ms) {
  return Duration(static_cast<int64_t>(ms * 1e3 + (ms >= 0 ? 0.5 : -0.5)));
}
inline double ToSeconds(Duration d) {
  return static_cast<double>(d.count()) * 1e-6;
}
inline double ToMillis(Duration d) {
  return static_cast<double>(d.count()) * 1e-3;
}
constexpr TimePoint AtMicros(int64_t us) {
  return TimePoint(Duration(us));
}
constexpr TimePoint kTimeZero = TimePoint(Duration(0));
constexpr TimePoint kTimeInfinite = TimePoint(Duration(INT64_MAX / 4));

}  // namespace sloserve
