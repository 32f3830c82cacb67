#include "sloserve/torch/blocking_executor_client.h"

namespace sloserve {

void BlockingResultSink::PostAt(ActionResult&& r, TimePoint) {
  Post(std::move(r));
}

void BlockingResultSink::Post(ActionResult r) {
  // Notified under the lock: once Wait has the result, its caller may destroy this sink
  // (ThreadSanitizer saw a notify after the unlock race with that destruction).
  MutexLock lock(mu_);
  results_.push_back(std::move(r));
  cv_.NotifyAll();
}

ActionResult BlockingResultSink::Wait(ActionId id) {
  MutexLock lock(mu_);
  while (true) {
    for (auto it = results_.begin(); it != results_.end(); ++it) {
      if (it->id != id) continue;
      ActionResult r = std::move(*it);
      results_.erase(it);
      return r;
    }
    cv_.Wait(mu_);
  }
}

BlockingExecutorClient::BlockingExecutorClient(WorkerExecutor* executor, PayloadStore* payloads)
    : executor_(executor), payloads_(payloads) {
  executor_->Attach(&sink_);
}

ActionResult BlockingExecutorClient::Load(WorkerId w, HardwareId hw, VariantId v,
                                          Duration expected) {
  LoadVariant a;
  a.id = next_id_++;
  a.worker = w;
  a.hardware = hw;
  a.variant = v;
  a.expected = expected;
  executor_->Send(a);
  return sink_.Wait(a.id);
}

ActionResult BlockingExecutorClient::Unload(WorkerId w, HardwareId hw, VariantId v) {
  UnloadVariant a;
  a.id = next_id_++;
  a.worker = w;
  a.hardware = hw;
  a.variant = v;
  executor_->Send(a);
  return sink_.Wait(a.id);
}

ActionResult BlockingExecutorClient::Run(WorkerId w, HardwareId hw, VariantId v,
                                         std::vector<TensorSet> inputs, TimePoint latest_start) {
  std::vector<Query> qs;
  qs.reserve(inputs.size());
  int32_t rows = 0;
  ActionResult failed;
  for (TensorSet& set : inputs) {
    Query q;
    q.id = static_cast<QueryId>(qs.size() + 1);
    q.size = set.empty() || set[0].shape.empty() ? 1 : static_cast<int32_t>(set[0].shape[0]);
    StatusOr<PayloadHandle> h = payloads_->Put(std::move(set));
    if (!h.ok()) {
      failed.status = h.status();
      break;
    }
    q.payload = *h;
    rows += q.size;
    qs.push_back(q);
  }
  RunBatch a;
  a.id = next_id_++;
  a.worker = w;
  a.hardware = hw;
  a.variant = v;
  a.queries = qs;
  a.rows = rows;
  a.latest_start = latest_start;
  ActionResult r;
  if (failed.status.ok()) {
    executor_->Send(a);
    r = sink_.Wait(a.id);
  } else {
    r = std::move(failed);
    r.id = a.id;
    r.worker = w;
  }
  for (const Query& q : qs) payloads_->Release(q.payload);
  return r;
}

TensorSet BlockingExecutorClient::TakeOutput(PayloadHandle h) {
  std::shared_ptr<const TensorSet> set = payloads_->Get(h);
  payloads_->Release(h);
  return set ? *set : TensorSet{};
}

}  // namespace sloserve
