#include "sloserve/exec/profile_executor.h"

namespace sloserve {

Duration ProfileExecutor::Send(const WorkerAction& action) {
  ActionResult r;
  r.id = IdOf(action);
  Duration d{0};
  if (const auto* run = std::get_if<RunBatch>(&action)) {
    r.worker = run->worker;
    r.begin = run->earliest_start;
    d = model_.BatchDuration(*run, &r.solo);
  } else if (const auto* load = std::get_if<LoadVariant>(&action)) {
    r.worker = load->worker;
    r.begin = load->sent;
    d = model_.LoadDuration(*load);
  } else {
    const auto& unload = std::get<UnloadVariant>(action);
    r.worker = unload.worker;
    r.begin = unload.sent;
  }
  r.end = r.begin + d;
  const TimePoint at = r.end;
  sink_->PostAt(std::move(r), at);
  return d;
}

}  // namespace sloserve
