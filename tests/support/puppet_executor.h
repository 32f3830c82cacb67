#pragma once
// A puppet WorkerExecutor for engine tests: it records every action the engine sends and
// answers none by itself. The test answers them, in any order and with any status, by
// building results (Ok / Failed) and handing them to Engine::OnResult (or to a driver).
#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "sloserve/engine/engine.h"
#include "sloserve/engine/worker_protocol.h"

namespace sloserve::testing {

class PuppetExecutor : public WorkerExecutor {
 public:
  enum class Kind { kRun, kLoad, kUnload };
  struct Sent {
    Kind kind = Kind::kRun;
    ActionId id = 0;
    WorkerId worker = 0;
    VariantId variant = kNoId;
    // RunBatch only (copied: the action's span dies with Send).
    std::vector<Query> queries;
    std::vector<QueryId> ids;
    int32_t rows = 0;
    TimePoint earliest_start{};
    TimePoint latest_start{};
    Duration expected{};
    TimePoint sent{};  // Load/Unload only
    bool answered = false;
  };

  // What Send returns (the executor's own estimate of the duration; 0 = none).
  Duration estimate = Millis(10);

  Duration Send(const WorkerAction& action) override {
    Sent s;
    if (const auto* run = std::get_if<RunBatch>(&action)) {
      s.kind = Kind::kRun;
      s.id = run->id;
      s.worker = run->worker;
      s.variant = run->variant;
      s.queries.assign(run->queries.begin(), run->queries.end());
      for (const Query& q : run->queries) s.ids.push_back(q.id);
      s.rows = run->rows;
      s.earliest_start = run->earliest_start;
      s.latest_start = run->latest_start;
      s.expected = run->expected;
    } else if (const auto* load = std::get_if<LoadVariant>(&action)) {
      s.kind = Kind::kLoad;
      s.id = load->id;
      s.worker = load->worker;
      s.variant = load->variant;
      s.sent = load->sent;
      s.expected = load->expected;
    } else {
      const auto& unload = std::get<UnloadVariant>(action);
      s.kind = Kind::kUnload;
      s.id = unload.id;
      s.worker = unload.worker;
      s.variant = unload.variant;
      s.sent = unload.sent;
    }
    sent.push_back(std::move(s));
    return estimate;
  }

  // The sink the engine's driver attached (null when the test drives the engine alone).
  ResultSink* sink() const { return sink_; }

  // Indices into `sent` of the actions of one kind (optionally on one worker), in order.
  std::vector<size_t> Of(Kind kind, WorkerId worker = kNoId) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < sent.size(); ++i) {
      if (sent[i].kind == kind && (worker == kNoId || sent[i].worker == worker)) out.push_back(i);
    }
    return out;
  }
  std::vector<size_t> Runs(WorkerId worker = kNoId) const { return Of(Kind::kRun, worker); }
  std::vector<size_t> Loads(WorkerId worker = kNoId) const { return Of(Kind::kLoad, worker); }
  std::vector<size_t> Unloads(WorkerId worker = kNoId) const { return Of(Kind::kUnload, worker); }
  // Indices of actions not answered yet.
  std::vector<size_t> Unanswered() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < sent.size(); ++i)
      if (!sent[i].answered) out.push_back(i);
    return out;
  }
  // The last action sent (of any kind): index, or nullopt when none.
  std::optional<size_t> Last() const {
    if (sent.empty()) return std::nullopt;
    return sent.size() - 1;
  }

  // The result of action `i` with `status` (marks it answered); begin/end as given.
  ActionResult Result(size_t i, Status status = OkStatus(), TimePoint begin = {},
                      TimePoint end = {}) {
    Sent& s = sent.at(i);
    s.answered = true;
    ActionResult r;
    r.id = s.id;
    r.worker = s.worker;
    r.status = std::move(status);
    r.begin = begin;
    r.end = end;
    return r;
  }
  // Answers action `i` on the engine at `now`.
  void Answer(Engine& engine, size_t i, TimePoint now, Status status = OkStatus()) {
    engine.OnResult(Result(i, std::move(status), sent.at(i).earliest_start, now), now);
  }
  void Fail(Engine& engine, size_t i, TimePoint now,
            Status status = UnavailableError("puppet: action failed")) {
    Answer(engine, i, now, std::move(status));
  }
  // Answers every unanswered action OK at `now`, repeatedly (answers may send more),
  // up to `rounds` times; returns how many it answered.
  size_t AnswerAll(Engine& engine, TimePoint now, int rounds = 1000) {
    size_t n = 0;
    for (int k = 0; k < rounds; ++k) {
      std::vector<size_t> open = Unanswered();
      if (open.empty()) break;
      for (size_t i : open) {
        Answer(engine, i, now);
        ++n;
      }
    }
    return n;
  }

  std::deque<Sent> sent;  // deque: references stay valid while more are sent
};

}  // namespace sloserve::testing
