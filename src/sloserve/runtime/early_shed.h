#pragma once
// Shedding on the network thread (issue 16, docs/admission.md "Early shedding"): under
// overload most requests are refused, and sending each one to the engine thread only to
// be refused costs two thread hand-offs (the inbox post and the answer's way back) that
// dominate the server's CPU per request. After every engine step the engine thread
// publishes, per priority level and served SLO, whether admission would refuse the
// cheapest request of that level right now: one row with that SLO, and how many rows such
// a request may have and still be judged on its wait (admission admits a request that
// would miss even with nothing queued, for its batch to decide: docs/admission.md rule 1).
// A request with its model's served SLO and from 1 row to that many (admission is monotone
// in rows there) is then refused by Submit() on the caller's thread with the engine's
// answer, and
// counted here; the runtime adds those counts to the engine's metrics, so shed requests
// are reported the same wherever they were refused. The state is at most one engine
// step old: the engine thread steps at every arrival it sees and every batch completion.
//
// Several models (issue 31): each served model is a probe of its own (SetSlos, once,
// before serving), judged by that model's admission (its SLO, its own waiting rows and
// the workers that serve it: Engine::WouldShed). At most kMaxSlos models are probed; the
// others are not shed early, their requests go to the engine, which sheds them there.
// (Until 2026-11-29 models sharing an SLO shared a probe judged by the pool's admission,
// i.e. the engine's first model's capacity against every model's queue.)
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/time.h"
#include "sloserve/engine/admission.h"
#include "sloserve/engine/metrics.h"

namespace sloserve {

class EarlyShed {
 public:
  static constexpr size_t kMaxSlos = 16;
  static constexpr size_t kNoProbe = kMaxSlos;

  // Before serving: the SLO of every model, by TaskId (zero: not served). Returns each
  // model's probe, kNoProbe for models not served and beyond kMaxSlos probes.
  std::vector<size_t> SetSlos(const std::vector<Duration>& by_model);
  // Whether admission would refuse one row of `model` with `slo` at priority `level` now.
  using WouldShed = std::function<bool(TaskId model, Duration slo, int32_t level)>;
  // The most rows a request of `model` with `slo` may have and be judged on its wait.
  using MaxRowsAlone = std::function<int64_t(TaskId model, Duration slo)>;
  // Engine thread, after each step: `levels` priority levels (AdmissionOptions).
  void Publish(const WouldShed& would_shed, const MaxRowsAlone& max_rows, int32_t levels);
  // Caller's thread: whether a request of resolved `level` (1..levels) and `rows` of a
  // model whose probe is `probe` is refused now (counted if so). `probe_slo` = it asks for
  // the probe's SLO (its model's).
  bool Refuse(int32_t level, size_t probe, bool probe_slo, int64_t rows);

  int64_t refused() const;
  // Adds the refused requests to an engine summary `m` (arrived, dropped, shed and their
  // rates) and to its per-level counts `levels` (MetricsCollector::PriorityCounts), and
  // lists those levels in m.priorities by the summary's rule (when two or more were seen).
  void AddTo(MetricsSummary& m, std::vector<PriorityStats>& levels) const;

 private:
  struct Probe {
    TaskId model = 0;
    Duration slo{};
  };
  std::vector<Probe> probes_;  // fixed before serving
  // [probe][level]
  std::array<std::array<std::atomic<bool>, kMaxPriorityLevels + 1>, kMaxSlos> shedding_{};
  std::array<std::atomic<int64_t>, kMaxSlos> max_rows_{};  // [probe]
  std::array<std::atomic<int64_t>, kMaxPriorityLevels + 1> refused_{};
};

}  // namespace sloserve
