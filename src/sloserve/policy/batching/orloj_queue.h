#pragma once
// ORLOJ's priority structure (section 4.4). Between milestones a request's score is
// alpha * X + beta with X = e^{b (t - base)}, so the best request at time t is the point
// (alpha, beta) maximising a line query at X. ORLOJ uses the Overmars-van Leeuwen
// dynamic convex hull (O(log^2 n) update, O(1) query). We use a *kinetic tournament*
// instead, which exploits that X only grows between re-basings:
//
//   * a complete binary tree over slots; each internal node keeps the winner (the best
//     of its two children's winners at the current X) and a certificate: the X at which
//     its loser overtakes it (+inf if never), plus the minimum certificate of its subtree;
//   * Insert / Update / Erase change one leaf and recompute its O(log n) ancestors;
//   * Best(X) first repairs exactly the nodes whose certificate failed (X moved past
//     them), bottom-up, then reads the root. Lines cross at most once, so each pair
//     swaps at most once per base: amortised O(log^2 n) per operation overall, O(1)
//     when nothing failed;
//   * a query with a smaller X than the previous one (after a re-base) rebuilds in O(n).
//
// Ties (equal score) go to the smaller tag. Certificates are triggered a hair early
// (relative 1e-9) so rounding can never leave a stale winner; an early repair is harmless.
// Handles are stable until erased; capacity doubles when full.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace sloserve {

class KineticMaxQueue {
 public:
  using Handle = uint32_t;
  static constexpr Handle kInvalid = std::numeric_limits<uint32_t>::max();

  explicit KineticMaxQueue(size_t initial_capacity = 16);

  Handle Insert(double alpha, double beta, uint64_t tag);
  void Update(Handle h, double alpha, double beta);
  void Erase(Handle h);
  // The handle with the highest alpha * x + beta (kInvalid if empty).
  Handle Best(double x);
  // Multiplies every alpha by `factor` (> 0) and resets the query point to `x`: used
  // when the time base moves (X' = X / factor keeps every score).
  void Rescale(double factor, double x);
  void Clear();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  double alpha(Handle h) const { return leaves_[h].alpha; }
  double beta(Handle h) const { return leaves_[h].beta; }
  uint64_t tag(Handle h) const { return leaves_[h].tag; }
  double Score(Handle h, double x) const { return leaves_[h].alpha * x + leaves_[h].beta; }

 private:
  struct Leaf {
    double alpha = 0;
    double beta = 0;
    uint64_t tag = 0;
    bool alive = false;
  };
  struct Node {
    Handle winner = kInvalid;
    double fail = std::numeric_limits<double>::infinity();      // own certificate
    double min_fail = std::numeric_limits<double>::infinity();  // over the subtree
  };
  bool Better(Handle a, Handle b) const;  // a beats b at x_
  void Pull(size_t node);                 // recompute from children at x_
  void Repair(size_t node);               // fix failed certificates below node
  void PullPath(Handle leaf);
  void Rebuild();
  void Grow();

  size_t cap_;  // number of leaves, a power of two
  std::vector<Leaf> leaves_;
  std::vector<Node> nodes_;  // 1-based heap layout; leaf i is node cap_ + i
  std::vector<Handle> free_;
  size_t size_ = 0;
  double x_ = 0;
};

}  // namespace sloserve
