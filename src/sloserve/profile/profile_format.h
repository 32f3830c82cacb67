#pragma once
// Constants shared by the profile text parser and writer (format: docs/profiles.md).
// tools/convert_profiles.py writes the same layout; keep the two in step.

namespace sloserve::profile_format {

inline constexpr char kMagic[] = "sloserve-profile";
inline constexpr int kVersion = 1;
inline constexpr char kHeaderComment[] =
    "# sloserve profile suite; format: docs/profiles.md. All times are integer microseconds.";
// Samples per latency/load line; longer profiles continue on adjacent lines (diffable).
inline constexpr int kSamplesPerLine = 100;

}  // namespace sloserve::profile_format
