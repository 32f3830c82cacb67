#pragma once
// Shedding on the network thread (issue 16, docs/admission.md "Early shedding"): under
// overload most requests are refused, and sending each one to the engine thread only to
// be refused costs two thread hand-offs (the inbox post and the answer's way back) that
// dominate the server's CPU per request. After every engine step the engine thread
// publishes, per priority level, whether admission would refuse the cheapest request
// of that level right now: one row with the deployment's SLO. A request that is no
// cheaper (its own rows >= 1, its SLO <= the deployment's; admission is monotone in both)
// is then refused by Submit() on the caller's thread with the engine's answer, and
// counted here; the runtime adds those counts to the engine's metrics, so shed requests
// are reported the same wherever they were refused. The state is at most one engine
// step old: the engine thread steps at every arrival it sees and every batch completion.
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "sloserve/core/time.h"
#include "sloserve/engine/admission.h"
#include "sloserve/engine/metrics.h"

namespace sloserve {

class EarlyShed {
 public:
  // Engine thread: `queued_rows` wait in the engine now.
  void Publish(const AdmissionControl& admission, int64_t queued_rows, TimePoint now, Duration slo);
  // Caller's thread: whether a request of resolved `level` (1..levels) is refused now
  // (counted if so). `cheapest` = its rows and SLO are no cheaper than the probe's.
  bool Refuse(int32_t level, bool cheapest);

  int64_t refused() const;
  // Adds the refused requests to an engine summary `m` (arrived, dropped, shed and their
  // rates) and to its per-level counts `levels` (MetricsCollector::PriorityCounts), and
  // lists those levels in m.priorities by the summary's rule (when two or more were seen).
  void AddTo(MetricsSummary& m, std::vector<PriorityStats>& levels) const;

 private:
  std::array<std::atomic<bool>, kMaxPriorityLevels + 1> shedding_{};  // [level]
  std::array<std::atomic<int64_t>, kMaxPriorityLevels + 1> refused_{};
};

}  // namespace sloserve
