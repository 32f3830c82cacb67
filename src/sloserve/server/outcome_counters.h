#pragma once
// sloserve_requests_total{model, outcome, reason, variant, slo_class} (issue 36): every
// request a frontend answered, by model, outcome and SLO-miss reason, the variant that
// answered it ("none" when none did) and its SLO class (the request's SLO in
// milliseconds, e.g. "150"; "none" for a request refused before its SLO was read).
//
// Bounded, whatever clients send (docs/metrics.md "Bounded labels"): models are fixed at
// construction; at most kMaxSloClasses distinct SLOs get a class of their own (the models'
// default SLOs first, then the first ones requests bring), the rest are "other"; at most
// max_keys() (model, variant, slo_class) combinations get their own counters — kMaxKeys, or
// four times the combinations the models and their variants make at their default SLOs when
// that is more (the operator's models, not the clients', set it) — and requests beyond
// share one set per model labelled variant="other", slo_class="other". Recording is
// lock-free (relaxed atomics; a combination is added by a compare-and-swap into a fixed
// table), so the request path never waits for a scrape.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/time.h"

namespace sloserve {

class OutcomeCounters {
 public:
  static constexpr size_t kMaxSloClasses = 16;
  static constexpr size_t kMaxKeys = 1024;  // the least max_keys()
  // The outcome rows: (outcome, reason) pairs; every request lands in exactly one.
  struct Row {
    const char* outcome;
    const char* reason;
  };
  static constexpr size_t kRowMet = 0, kRowLate = 1, kRowInvalid = 13;
  static const Row kRows[14];
  static constexpr size_t kRowCount = 14;

  // `default_slos[m]`: model m's default SLO (zero: none), given a class first; `variants[m]`:
  // its variants, whose met/late counters (with "none"'s others) exist from the start at 0.
  OutcomeCounters(std::vector<std::string> models, const std::vector<Duration>& default_slos,
                  const std::vector<std::vector<std::string>>& variants);
  ~OutcomeCounters();
  OutcomeCounters(const OutcomeCounters&) = delete;
  OutcomeCounters& operator=(const OutcomeCounters&) = delete;

  size_t max_keys() const { return max_keys_; }
  // `variant` empty = none answered; `slo` zero or less = not known ("none").
  void Add(size_t model, size_t row, std::string_view variant, Duration slo);
  // The counter family in the Prometheus text format.
  std::string RenderPrometheus() const;

  struct Key;  // one (model, variant, slo_class) with its rows; defined in the .cc

 private:
  // The class of `slo`: its index, kOtherClass beyond kMaxSloClasses, kNoClass if unknown.
  static constexpr size_t kOtherClass = kMaxSloClasses, kNoClass = kMaxSloClasses + 1;
  size_t ClassOf(Duration slo);
  std::string ClassName(size_t c) const;
  Key* FindOrAdd(size_t model, std::string_view variant, size_t slo_class);

  std::vector<std::string> models_;
  std::array<std::atomic<int64_t>, kMaxSloClasses> class_us_{};  // 0 = free
  std::vector<std::unique_ptr<Key>> overflow_;                   // per model
  size_t max_keys_ = kMaxKeys;
  size_t mask_ = 2 * kMaxKeys - 1;  // the table has 2 x max_keys_ (a power of two) slots
  std::unique_ptr<std::atomic<Key*>[]> table_;
  std::atomic<size_t> keys_{0};
};

}  // namespace sloserve
