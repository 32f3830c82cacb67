#include "sloserve/exec/proxy_executor.h"

#include <algorithm>

namespace sloserve {

TimePoint& ProxyExecutor::EndOf(WorkerId w) {
  if (end_.size() <= w) end_.resize(w + 1, kTimeZero);
  return end_[w];
}

TimePoint ProxyExecutor::busy_until(WorkerId w) const {
  const TimePoint sent = w < end_.size() ? end_[w] : kTimeZero;
  return w < expected_.size() ? std::max(sent, expected_[w]) : sent;
}

void ProxyExecutor::ExtendBusy(WorkerId w, TimePoint until) {
  if (expected_.size() <= w) expected_.resize(w + 1, kTimeZero);
  expected_[w] = std::max(expected_[w], until);
}

Duration ProxyExecutor::Send(const WorkerAction& action) {
  ActionResult r;
  r.id = IdOf(action);
  if (const auto* run = std::get_if<RunBatch>(&action)) {
    r.worker = run->worker;
    TimePoint& busy = EndOf(run->worker);
    r.begin = std::max(run->earliest_start, busy);
    r.end = r.begin + model_.BatchDuration(*run, &r.solo);
    busy = r.end;
    if (observer_.on_run)
      observer_.on_run({run->worker, run->variant, run->queries, r.begin, r.end});
    const TimePoint at = r.end;
    sink_->PostAt(std::move(r), at);
    return at - run->earliest_start;
  }
  if (const auto* load = std::get_if<LoadVariant>(&action)) {
    r.worker = load->worker;
    TimePoint& busy = EndOf(load->worker);
    r.begin = std::max(load->sent, busy);
    r.end = r.begin + model_.LoadDuration(*load);
    busy = r.end;
    if (observer_.on_load) observer_.on_load({load->worker, load->variant, r.begin, r.end});
    const TimePoint at = r.end;
    sink_->PostAt(std::move(r), at);
    return at - load->sent;
  }
  const auto& unload = std::get<UnloadVariant>(action);
  r.worker = unload.worker;
  r.begin = r.end = unload.sent;
  if (observer_.on_unload) observer_.on_unload(unload.worker, unload.variant);
  sink_->PostAt(std::move(r), unload.sent);
  return Duration(0);
}

}  // namespace sloserve
