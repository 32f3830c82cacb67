#pragma once
// Hand-made candidates for the composed planner's tests.
#include <string>

#include "sloserve/composed/problem.h"

namespace sloserve::testing {

inline ComposedCandidate Candidate(TaskId m, VariantId v, HardwareId h, double acc, double cap,
                                   double price, double load_s = 0, int current = 0) {
  ComposedCandidate c;
  c.model = m;
  c.variant = v;
  c.hardware = h;
  c.name = "m" + std::to_string(m) + "v" + std::to_string(v) + "h" + std::to_string(h);
  c.accuracy = acc;
  c.capacity_rps = cap;
  c.price_per_hour = price;
  c.load_time_s = load_s;
  c.current = current;
  return c;
}

}  // namespace sloserve::testing
