#pragma once
// Dense integer ids. Variants, hardware types and tasks index into a ProfileSuite's
// vectors; workers index into the engine's worker table; queries are numbered by arrival.
#include <cstdint>
#include <limits>

namespace sloserve {

using QueryId = uint64_t;
using VariantId = uint32_t;
using HardwareId = uint32_t;
using TaskId = uint32_t;
using WorkerId = uint32_t;
using AppId = uint32_t;
using BatchId = uint64_t;
using MachineId = uint32_t;
using ActionId = uint64_t;       // one worker action (run, load, unload); 0 = none
using PayloadHandle = uint64_t;  // a tensor set in a PayloadStore; 0 = none

inline constexpr uint32_t kNoId = std::numeric_limits<uint32_t>::max();

}  // namespace sloserve
