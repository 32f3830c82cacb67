#pragma once
// How many rows one request may have: the largest batch a variant's profile says it
// finishes within an SLO. Shared by the selection wrapper that fits a batch to a
// multi-row request (row_fit_selection.h) and by the server, which refuses larger
// requests up front and advertises the limit as max_batch_size (docs/protocol.md).
#include <span>
#include <utility>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/time.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class ProfileSuite;

class RowCapacity {
 public:
  // The latency quantile a batch must finish within the SLO at (RAMSIS's default).
  static constexpr double kQuantile = 0.95;

  RowCapacity() = default;
  explicit RowCapacity(const ProfileSuite* suite);

  // The largest profiled batch of `v` on `hw` whose p95 latency is within `slo`; 0 when
  // not even one row is (or `v` has no profile on `hw`).
  int RowsWithin(HardwareId hw, VariantId v, Duration slo) const;
  // The most rows a request of `task` with `slo` may have on any of `hardware`: the
  // largest RowsWithin of its variants, at least 1 when one of them is profiled there (a
  // one-row request is served, late rather than never); 0 when none is.
  int MaxRows(std::span<const HardwareId> hardware, TaskId task, Duration slo) const;
  // `chosen` (a selection's decision on `hw`) made to hold a request of `rows` rows
  // within `slo`: the chosen variant when it takes `rows` within `slo` (batch at least
  // `rows`), else the most accurate variant of `task` that does (batch `rows`). When none
  // does: `chosen` if its batch holds `rows` (late rather than never), else variant
  // kNoId. One row, or no chosen variant: `chosen` as it is.
  SelectionDecision Fit(HardwareId hw, TaskId task, Duration slo, int rows,
                        SelectionDecision chosen) const;

 private:
  const ProfileSuite* suite_ = nullptr;
  // Per (hardware, variant), hw * variants + v: (profiled batch, its p95), ascending.
  std::vector<std::vector<std::pair<int, Duration>>> points_;
};

}  // namespace sloserve
