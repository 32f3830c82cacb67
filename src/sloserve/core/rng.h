#pragma once
// Seeded, reproducible random streams. Each consumer derives its own stream from a
// (seed, stream name) pair so adding a consumer never perturbs another's draws.
#include <cstdint>
#include <random>
#include <string_view>

namespace sloserve {

using Rng = std::mt19937_64;

// SplitMix64 finalizer: decorrelates nearby seeds.
constexpr uint64_t MixSeed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t HashName(std::string_view name) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

inline Rng MakeRng(uint64_t seed, std::string_view stream) {
  return Rng(MixSeed(seed ^ HashName(stream)));
}

// Uniform double in [0, 1) with 53 random bits (portable, unlike uniform_real_distribution).
inline double Uniform01(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace sloserve
