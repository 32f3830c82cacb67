#pragma once
// Large freed blocks go back to the OS (issue 16: memory returned after a large request).
//
// glibc serves a block from a mapping of its own only above its mmap threshold, and it
// raises that threshold (up to 32 MiB) each time such a block is freed. So after the
// first 16 MiB request body is freed, later bodies, their tensors and parse buffers come
// from the heap arenas (one per thread that allocates: io threads, the parse thread, the
// engine) and stay there when freed: a burst of 15 MiB bodies left `serve` 59 MiB above
// its RSS before the burst (experiments/limits/burst_rss.py). Setting the threshold fixes
// it, so a block of that size or more is unmapped when freed; the small blocks of a
// request's JSON tree are returned by the server's malloc_trim (http_server.cc).
//
// Process-wide. Not for processes that want freed memory kept (the LibTorch executor
// sets its own threshold on purpose, docs/torch.md). False where the allocator is not
// glibc's or refuses the value (nothing changed).
#include <cstddef>

namespace sloserve {

// glibc refuses thresholds above half its heap size (32 MiB on 64-bit systems).
inline constexpr size_t kMaxMmapThresholdBytes = size_t{32} << 20;

// Sets the threshold to `threshold_bytes` (1..kMaxMmapThresholdBytes). HttpServer::Start
// calls it with Options::mmap_threshold_bytes.
bool ReturnLargeBlocksToOs(size_t threshold_bytes);

}  // namespace sloserve
