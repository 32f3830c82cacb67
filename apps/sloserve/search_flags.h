#pragma once
// The allowable-throughput search's flags, shared by `kairos throughput` and `plan kairos`:
// --start, --tol and --quantile, each checked against its range before any run, so a bad
// one is named (the search itself only said "bad search options").
#include "cli_args.h"
#include "sloserve/sim/allowable_throughput.h"

namespace sloserve::cli {

// --start QPS in (0, 1000000], --tol FRACTION in (0, 1], --quantile Q in (0, 1); the
// defaults (10, 0.02, 0.99) when not given.
StatusOr<ThroughputSearchOptions> ParseThroughputSearchFlags(const Args& args);

}  // namespace sloserve::cli
