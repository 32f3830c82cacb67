#pragma once
// Fixed selection: every batch of a task runs on one configured variant.
// The baseline that model-selection methods (RAMSIS, InfAdapter) are compared against.
// Options:
//   variant    comma-separated variant names, at most one per task; a task without one
//              uses its most accurate variant profiled on the worker's hardware.
//   max_batch  cap on rows per batch (default: the largest profiled batch).
#include <vector>

#include "sloserve/policy/interfaces.h"

namespace sloserve {

class FixedSelection : public SelectionPolicy {
 public:
  struct Options {
    std::vector<std::string> variants;
    int max_batch = 0;  // 0 = the profile's largest
  };
  static StatusOr<std::unique_ptr<SelectionPolicy>> Create(const PolicyParams& params);

  explicit FixedSelection(Options options) : options_(std::move(options)) {}
  Status Init(const PolicyContext& ctx) override;
  SelectionDecision Choose(const WorkerView& worker, const QueueView& queue, const Query& head,
                           TimePoint now) override;

 private:
  Options options_;
  // choice_[hardware][task] -> decision, precomputed at Init.
  std::vector<std::vector<SelectionDecision>> choice_;
};

}  // namespace sloserve
