#pragma once
// ModelSwitching's offline measurement: the p99 response latency of each variant under
// each anticipated load, per worker count and SLO, as a CSV (docs/policies/model_switching.md).
// Produced by `sloserve profile load-latency` with the simulator; read by the policy.
#include <map>
#include <string>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

struct ResponseLatencyRow {
  std::string variant;
  int workers = 0;
  double slo_ms = 0;
  double load_qps = 0;
  double p99_ms = 0;
  double violation_rate = 0;
};

class ResponseLatencyTable {
 public:
  static StatusOr<ResponseLatencyTable> Parse(const std::string& text, const std::string& origin);
  static StatusOr<ResponseLatencyTable> Load(const std::string& path);
  static std::string Header();
  static std::string Format(const ResponseLatencyRow& row);

  void Add(ResponseLatencyRow row);
  const std::vector<ResponseLatencyRow>& rows() const { return rows_; }
  // p99 of `variant` at the smallest measured load >= load_qps, with the largest measured
  // worker count <= workers, for the measured SLO closest to slo_ms. Negative when the
  // load is beyond every measurement (the variant cannot be shown to keep up).
  double P99At(const std::string& variant, int workers, double slo_ms, double load_qps) const;

 private:
  std::vector<ResponseLatencyRow> rows_;
  // (variant) -> rows sorted by (slo, workers, load)
  std::map<std::string, std::vector<ResponseLatencyRow>> by_variant_;
};

}  // namespace sloserve
