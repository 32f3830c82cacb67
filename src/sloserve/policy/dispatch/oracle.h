#pragma once
// The Oracle of the Kairos paper (HPDC'23, section 7, "ORCL"): a practically infeasible
// distribution scheme that knows the future, used only as a throughput bound. It takes
// a sequence of queries drawn from the query-size distribution, sorted by size; whenever
// a base instance is free it serves the next largest query, whenever an auxiliary
// instance is free the next smallest. There is no waiting (every query is available at
// time 0) and a query never runs on an instance where it would violate QoS: an
// auxiliary instance that cannot meet QoS for the smallest remaining query retires, and
// a query the base type cannot serve within QoS is skipped (not counted). The bound is
// served queries / makespan, in queries per second.
//
// Latencies are point predictions (a LatencyPredictor in profile mode: the mean by
// default). Picking the best configuration with this bound (the paper's "among all
// possible heterogeneous configurations, the largest throughput") is left to the caller.
#include <utility>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/policy/latency_learning/latency_predictor.h"

namespace sloserve {

struct OracleResult {
  double qps = 0;
  int64_t served = 0;
  int64_t skipped = 0;  // queries no instance type serves within QoS
  double makespan_s = 0;
};

// `mix`: (hardware, count) pairs. The base type is the one with the lowest predicted
// latency at `largest_query` rows (Definition 1); every other type is auxiliary.
StatusOr<OracleResult> OracleThroughput(const LatencyPredictor& predictor, VariantId variant,
                                        const std::vector<std::pair<HardwareId, int>>& mix,
                                        Duration qos, int largest_query, std::vector<int> sizes);

}  // namespace sloserve
