#pragma once
// Where the driver's `now` comes from. The engine and the policies never read a clock;
// the driver reads one of these and hands the time in: virtual time in `sim` (and the
// fake clock of tests: a ManualClock both), the steady clock in `serve`.
#include <chrono>

#include "sloserve/core/time.h"

namespace sloserve {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// Time moves only when told: the simulator jumps it to the next event, a test sets it.
class ManualClock : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  void Set(TimePoint t) { now_ = t; }
  void Advance(Duration d) { now_ += d; }

 private:
  TimePoint now_{};
};

// Microseconds of the steady clock since construction (the server's start).
class SteadyClock : public Clock {
 public:
  SteadyClock() : epoch_(std::chrono::steady_clock::now()) {}
  TimePoint Now() const override {
    return TimePoint(
        std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - epoch_));
  }
  std::chrono::steady_clock::time_point ToSteady(TimePoint t) const {
    return epoch_ +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(t.time_since_epoch());
  }

 private:
  std::chrono::steady_clock::time_point epoch_;
};

}  // namespace sloserve
