#include "search_flags.h"

namespace sloserve::cli {

StatusOr<ThroughputSearchOptions> ParseThroughputSearchFlags(const Args& args) {
  ThroughputSearchOptions o;
  // The search probes at most max_qps: a start above it would only be clamped.
  ASSIGN_OR_RETURN(o.start_qps,
                   args.GetDoubleIn("start", o.start_qps, {0, o.max_qps, true, "qps"}));
  ASSIGN_OR_RETURN(o.rel_tol, args.GetDoubleIn("tol", o.rel_tol, {0, 1, true, ""}));
  // 1 would allow no miss at all (and 0 every one): the QoS quantile is strictly inside.
  ASSIGN_OR_RETURN(o.quantile, args.GetDouble("quantile", o.quantile));
  if (!(o.quantile > 0 && o.quantile < 1)) {
    return InvalidArgumentError("--quantile: must be in (0, 1), got " + args.Get("quantile"));
  }
  return o;
}

}  // namespace sloserve::cli
