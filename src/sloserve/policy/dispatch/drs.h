#pragma once
// DRS query distribution: the DeepRecSys scheduler (Gupta et al., ISCA'20) as the Kairos
// paper uses it as a baseline (HPDC'23, section 7): a static query-size threshold sends
// a query larger than `drs_threshold` rows to the base instance type and a query of at
// most that size to the auxiliary types. Each idle active instance with an empty queue
// takes the oldest pending query of its class (base instances first, then auxiliary
// ones fastest type first). If the deployment has no instance of a class (homogeneous
// configurations), that class is served by any instance, so no query is stranded.
// The threshold is found by hill climbing on allowable throughput, outside the policy:
// `sloserve kairos throughput --tune drs_threshold=...` (docs/kairos.md).
// On a multi-model pool an instance takes only queries of models it serves, and base and
// auxiliary are by the query's model's coefficients (kairos_common.h).
// Options: drs_threshold (rows, default 100), kairos_window (pending queries scanned per
// decision, default 100), variant.
#include <memory>
#include <vector>

#include "sloserve/policy/dispatch/kairos_common.h"
#include "sloserve/policy/interfaces.h"

namespace sloserve {

class DrsDispatch : public DispatchPolicy {
 public:
  struct Options {
    int threshold = 100;
    int window = 100;
    std::string variant;
  };
  static StatusOr<std::unique_ptr<DispatchPolicy>> Create(const PolicyParams& params);
  explicit DrsDispatch(Options o) : options_(std::move(o)) {}
  Status Init(const PolicyContext& ctx) override;
  void Assign(const QueueView& pending, const std::vector<WorkerView>& workers, TimePoint now,
              std::vector<Assignment>* out) override;

 private:
  Options options_;
  HeteroDeployment deployment_;
  bool has_aux_ = false;
  std::vector<uint8_t> task_has_aux_;  // by TaskId: its model is served by several types
  std::vector<size_t> idle_;
  std::vector<uint8_t> taken_;
};

}  // namespace sloserve
