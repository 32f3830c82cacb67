#pragma once
// What one message of the Run stream carries (docs/remote-workers.md, "The Run stream"):
// the items queued while the previous message was being written, up to kRunStreamBatchBytes
// (at least one), so a message of many Runs or replies with tensors stays far below the
// 64 MiB message limit that each of them alone is held to.
#include <google/protobuf/repeated_ptr_field.h>

#include <cstddef>
#include <utility>

namespace sloserve::remote {

inline constexpr size_t kRunStreamBatchBytes = size_t{1} << 20;

// Moves the first items of `queued` (in order) into the emptied `batch`.
template <class T>
void TakeBatch(google::protobuf::RepeatedPtrField<T>* queued,
               google::protobuf::RepeatedPtrField<T>* batch) {
  batch->Clear();
  size_t bytes = 0;
  int n = 0;
  for (; n < queued->size(); ++n) {
    const size_t size = queued->Get(n).ByteSizeLong();
    if (n > 0 && bytes + size > kRunStreamBatchBytes) break;
    bytes += size;
  }
  if (n == queued->size()) {
    batch->Swap(queued);
    return;
  }
  for (int i = 0; i < n; ++i) batch->Add(std::move(*queued->Mutable(i)));
  queued->DeleteSubrange(0, n);
}

}  // namespace sloserve::remote
