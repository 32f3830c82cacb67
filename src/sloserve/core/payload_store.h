#pragma once
// Tensors and the store that carries them between the frontend and the executors
// (issue 10, "Payloads"). A request owns its input tensors; the runtime Put()s them here
// and the engine carries only the PayloadHandle (Query::payload). An executor resolves
// the handle with Get(), runs, Put()s its outputs and returns their handle in
// ActionResult::outputs; the runtime resolves that into the client's answer and Release()s
// both handles once the query is answered.
//
// Thread-safety: every method may be called from any thread at once. Get() hands out a
// shared_ptr, so a reader keeps the tensors alive even if the handle is released meanwhile.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/mutex.h"
#include "sloserve/core/status.h"

namespace sloserve {

// One named tensor in KServe v2 terms.
//
// `data` holds the elements in row-major order as raw little-endian bytes of the
// datatype: BOOL 1 byte (0 or 1), INT8/UINT8 1, INT16/UINT16/FP16/BF16 2,
// INT32/UINT32/FP32 4, INT64/UINT64/FP64 8. BYTES elements are length-prefixed strings:
// each one is a 4-byte little-endian uint32 length followed by that many bytes (the
// KServe v2 binary-tensor layout), one after the other.
struct Tensor {
  std::string name;
  std::string datatype;  // KServe v2 datatype, e.g. "FP32"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};
using TensorSet = std::vector<Tensor>;

// Bytes one element of `datatype` takes in Tensor::data; 0 for BYTES (variable) or an
// unknown datatype.
size_t DatatypeSize(std::string_view datatype);

// The bytes a tensor set accounts for in a PayloadStore: its data plus a small fixed
// overhead per tensor (names, shapes), so even empty tensors count.
size_t TensorSetBytes(const TensorSet& set);

class PayloadStore {
 public:
  // `max_bytes`: the bound on the sum of TensorSetBytes over the sets held.
  explicit PayloadStore(size_t max_bytes);
  PayloadStore(const PayloadStore&) = delete;
  PayloadStore& operator=(const PayloadStore&) = delete;

  // Stores `set` and returns its handle (never 0). ResourceExhausted, naming the bound,
  // when holding it would exceed max_bytes.
  StatusOr<PayloadHandle> Put(TensorSet set) EXCLUDES(mu_);
  // The tensors under `handle`; nullptr when unknown (0, released or never issued).
  std::shared_ptr<const TensorSet> Get(PayloadHandle handle) const EXCLUDES(mu_);
  // Forgets `handle` (a no-op for 0 or an unknown handle). Readers holding the set from
  // Get() keep it until they drop it; its bytes are free for Put() at once.
  void Release(PayloadHandle handle) EXCLUDES(mu_);

  size_t max_bytes() const { return max_bytes_; }
  size_t bytes() const EXCLUDES(mu_);  // held now
  size_t size() const EXCLUDES(mu_);   // sets held now

 private:
  struct Entry {
    std::shared_ptr<const TensorSet> set;
    size_t bytes = 0;
  };
  const size_t max_bytes_;
  mutable Mutex mu_;
  std::unordered_map<PayloadHandle, Entry> entries_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  PayloadHandle next_ GUARDED_BY(mu_) = 1;
};

}  // namespace sloserve
