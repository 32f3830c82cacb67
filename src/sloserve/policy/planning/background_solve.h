#pragma once
// A planner's solve run off the engine thread in a live server (PolicyContext::
// submit_offline), shared by the infadapter and composed planning policies. Submit hands
// the pool a job that runs `work` (which must own copies of everything it reads, so it
// may outlive the policy) and returns the step that publishes its result; the driver
// runs that step on the engine thread as an event. TakeResult gives the result once it
// is published. One solve at a time: a policy asks busy() before it submits another.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "sloserve/core/status.h"
#include "sloserve/policy/views.h"

namespace sloserve {

template <typename Result>
class BackgroundSolve {
 public:
  explicit BackgroundSolve(std::function<void(OfflineJob)> submit)
      : submit_(std::move(submit)), published_(std::make_shared<Slot>()) {}

  // A job was submitted and its result not taken yet.
  bool busy() const { return busy_; }

  void Submit(std::string what, std::function<StatusOr<Result>()> work) {
    busy_ = true;
    OfflineJob job;
    job.what = std::move(what);
    job.work = [work = std::move(work),
                slot = std::weak_ptr<Slot>(published_)]() -> std::function<void()> {
      auto result = std::make_shared<StatusOr<Result>>(work());
      return [result, slot] {
        if (auto live = slot.lock()) *live = std::move(*result);  // gone: nobody waits
      };
    };
    submit_(std::move(job));
  }

  // The submitted solve's result once published (then not busy); nullopt before.
  std::optional<StatusOr<Result>> TakeResult() {
    if (!busy_ || !*published_) return std::nullopt;
    busy_ = false;
    std::optional<StatusOr<Result>> out = std::move(*published_);
    published_->reset();
    return out;
  }

 private:
  using Slot = std::optional<StatusOr<Result>>;
  std::function<void(OfflineJob)> submit_;
  std::shared_ptr<Slot> published_;  // written on the engine thread only (the publish step)
  bool busy_ = false;
};

}  // namespace sloserve
