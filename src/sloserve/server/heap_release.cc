#include "sloserve/server/heap_release.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sloserve {

bool ReturnLargeBlocksToOs(size_t threshold_bytes) {
#if defined(__GLIBC__)
  if (threshold_bytes == 0 || threshold_bytes > kMaxMmapThresholdBytes) return false;
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(threshold_bytes)) == 1;
#else
  (void)threshold_bytes;
  return false;
#endif
}

}  // namespace sloserve
