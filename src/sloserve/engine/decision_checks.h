#pragma once
// The checks every batch decision passes before the engine applies it (docs/multi-model.md,
// "Engine"): its variant (after a plan's pin) exists, belongs to the model of every query
// in the batch, is profiled on the worker's hardware, and its rows (the sum of the
// queries' sizes) do not exceed the largest batch profiled there. The engine refuses a
// decision that fails one: counted, warned about with the policy's name, never applied.
#include <cstdint>
#include <string>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/query.h"
#include "sloserve/profile/profile.h"

namespace sloserve {

enum class BatchFault : uint8_t {
  kNone,
  kUnknownVariant,  // not a variant of the suite
  kOtherModel,      // a query of the batch is of another model (task) than the variant
  kNotProfiled,     // the variant has no latency profile on the worker's hardware
  kTooManyRows,     // more rows than the largest profiled batch there
};

class BatchChecks {
 public:
  BatchChecks() = default;
  // Precomputes the largest profiled batch of every (hardware, variant) of `suite`.
  explicit BatchChecks(const ProfileSuite& suite);

  // Checks a batch of `slots` (queries in `table`) on variant `v`, hardware `h`; `rows`
  // receives the batch's rows (computed on the way).
  BatchFault Check(HardwareId h, VariantId v, const std::vector<uint32_t>& slots,
                   const std::vector<Query>& table, int64_t* rows) const {
    *rows = 0;
    if (v >= variants_) return BatchFault::kUnknownVariant;
    const TaskId task = task_of_[v];
    bool other = false;
    for (uint32_t s : slots) {
      const Query& q = table[s];
      *rows += q.size;
      other = other || q.task != task;
    }
    if (other) return BatchFault::kOtherModel;
    const int32_t most = max_rows(h, v);
    if (most <= 0) return BatchFault::kNotProfiled;
    if (*rows > most) return BatchFault::kTooManyRows;
    return BatchFault::kNone;
  }
  // The largest profiled batch of (h, v); 0 when (h, v) has no profile (or is unknown).
  int32_t max_rows(HardwareId h, VariantId v) const {
    return h < hardware_ && v < variants_ ? max_rows_[h * variants_ + v] : 0;
  }
  // Per model (indexed by TaskId), 1 when hardware `h` has a profiled variant of it.
  const uint8_t* servable(HardwareId h) const {
    return h < hardware_ ? servable_.data() + h * tasks_ : nullptr;
  }
  // The model (task) of variant `v`; kNoId when unknown.
  TaskId task_of(VariantId v) const { return v < variants_ ? task_of_[v] : kNoId; }

  // The refusal, in words, for the warning: "variant 'b' (model 't2') for a query of model
  // 't1'" and the like.
  static std::string Describe(const ProfileSuite& suite, BatchFault fault, HardwareId h,
                              VariantId v, const std::vector<uint32_t>& slots,
                              const std::vector<Query>& table, int64_t rows);

 private:
  size_t hardware_ = 0;
  size_t variants_ = 0;
  size_t tasks_ = 0;
  std::vector<int32_t> max_rows_;  // [h * variants_ + v]
  std::vector<uint8_t> servable_;  // [h * tasks_ + t]
  std::vector<TaskId> task_of_;
};

}  // namespace sloserve
