#include "sloserve/core/payload_store.h"

#include <string_view>
#include <utility>

namespace sloserve {
namespace {
constexpr size_t kTensorOverhead = 64;  // name, datatype and shape, roughly
}  // namespace

size_t DatatypeSize(std::string_view dt) {
  if (dt == "BOOL" || dt == "INT8" || dt == "UINT8") return 1;
  if (dt == "INT16" || dt == "UINT16" || dt == "FP16" || dt == "BF16") return 2;
  if (dt == "INT32" || dt == "UINT32" || dt == "FP32") return 4;
  if (dt == "INT64" || dt == "UINT64" || dt == "FP64") return 8;
  return 0;
}

size_t TensorSetBytes(const TensorSet& set) {
  size_t n = 0;
  for (const Tensor& t : set) n += t.data.size() + kTensorOverhead;
  return n;
}

PayloadStore::PayloadStore(size_t max_bytes) : max_bytes_(max_bytes) {}

StatusOr<PayloadHandle> PayloadStore::Put(TensorSet set) {
  const size_t n = TensorSetBytes(set);
  // Built outside the lock: the allocation and move need no protection.
  auto shared = std::make_shared<const TensorSet>(std::move(set));
  MutexLock lock(mu_);
  if (n > max_bytes_ - bytes_) {  // bytes_ <= max_bytes_ always, so no underflow
    return ResourceExhaustedError(
        "payload store full: " + std::to_string(n) + " bytes do not fit (" +
        std::to_string(bytes_) + " of the bound of " + std::to_string(max_bytes_) + " bytes held)");
  }
  const PayloadHandle h = next_++;
  entries_.emplace(h, Entry{std::move(shared), n});
  bytes_ += n;
  return h;
}

std::shared_ptr<const TensorSet> PayloadStore::Get(PayloadHandle handle) const {
  MutexLock lock(mu_);
  const auto it = entries_.find(handle);
  return it == entries_.end() ? nullptr : it->second.set;
}

void PayloadStore::Release(PayloadHandle handle) {
  std::shared_ptr<const TensorSet> last;  // freed after the lock is dropped
  MutexLock lock(mu_);
  const auto it = entries_.find(handle);
  if (it == entries_.end()) return;
  bytes_ -= it->second.bytes;
  last = std::move(it->second.set);
  entries_.erase(it);
}

size_t PayloadStore::bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

size_t PayloadStore::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

}  // namespace sloserve
