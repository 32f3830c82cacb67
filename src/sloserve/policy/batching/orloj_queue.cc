#include "sloserve/policy/batching/orloj_queue.h"

#include <algorithm>
#include <cmath>

namespace sloserve {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

size_t RoundUpPow2(size_t n) {
  size_t c = 1;
  while (c < n) c <<= 1;
  return c;
}
}  // namespace

KineticMaxQueue::KineticMaxQueue(size_t initial_capacity)
    : cap_(RoundUpPow2(std::max<size_t>(initial_capacity, 2))) {
  leaves_.resize(cap_);
  nodes_.resize(2 * cap_);
  free_.reserve(cap_);
  for (size_t i = cap_; i-- > 0;) free_.push_back(static_cast<Handle>(i));
}

void KineticMaxQueue::Clear() {
  size_ = 0;
  x_ = 0;
  for (Leaf& l : leaves_) l = Leaf();
  for (Node& n : nodes_) n = Node();
  free_.clear();
  for (size_t i = cap_; i-- > 0;) free_.push_back(static_cast<Handle>(i));
}

bool KineticMaxQueue::Better(Handle a, Handle b) const {
  const Leaf& la = leaves_[a];
  const Leaf& lb = leaves_[b];
  const double va = la.alpha * x_ + la.beta;
  const double vb = lb.alpha * x_ + lb.beta;
  if (va != vb) return va > vb;
  return la.tag < lb.tag;
}

void KineticMaxQueue::Pull(size_t node) {
  Node& n = nodes_[node];
  const Node& l = nodes_[2 * node];
  const Node& r = nodes_[2 * node + 1];
  n.fail = kInf;
  if (l.winner == kInvalid) {
    n.winner = r.winner;
  } else if (r.winner == kInvalid) {
    n.winner = l.winner;
  } else {
    const bool left_wins = Better(l.winner, r.winner);
    const Handle w = left_wins ? l.winner : r.winner;
    const Handle lo = left_wins ? r.winner : l.winner;
    n.winner = w;
    const Leaf& lw = leaves_[w];
    const Leaf& ll = leaves_[lo];
    if (ll.alpha > lw.alpha) {  // the loser grows faster: it overtakes at x*
      double xs = (lw.beta - ll.beta) / (ll.alpha - lw.alpha);
      xs -= std::fabs(xs) * 1e-9 + 1e-300;
      n.fail = std::max(xs, x_);
    }
  }
  n.min_fail = std::min({n.fail, l.min_fail, r.min_fail});
}

void KineticMaxQueue::PullPath(Handle leaf) {
  for (size_t node = (cap_ + leaf) / 2; node >= 1; node /= 2) Pull(node);
}

void KineticMaxQueue::Repair(size_t node) {
  if (node >= cap_ || nodes_[node].min_fail > x_) return;
  Repair(2 * node);
  Repair(2 * node + 1);
  Pull(node);
}

void KineticMaxQueue::Rebuild() {
  for (size_t node = cap_ - 1; node >= 1; --node) Pull(node);
}

void KineticMaxQueue::Grow() {
  const size_t old = cap_;
  cap_ *= 2;
  leaves_.resize(cap_);
  nodes_.assign(2 * cap_, Node());
  for (size_t i = 0; i < old; ++i)
    if (leaves_[i].alive) nodes_[cap_ + i].winner = static_cast<Handle>(i);
  for (size_t i = cap_; i-- > old;) free_.push_back(static_cast<Handle>(i));
  Rebuild();
}

KineticMaxQueue::Handle KineticMaxQueue::Insert(double alpha, double beta, uint64_t tag) {
  if (free_.empty()) Grow();
  const Handle h = free_.back();
  free_.pop_back();
  leaves_[h] = Leaf{alpha, beta, tag, true};
  nodes_[cap_ + h].winner = h;
  ++size_;
  PullPath(h);
  return h;
}

void KineticMaxQueue::Update(Handle h, double alpha, double beta) {
  leaves_[h].alpha = alpha;
  leaves_[h].beta = beta;
  PullPath(h);
}

void KineticMaxQueue::Erase(Handle h) {
  if (h >= cap_ || !leaves_[h].alive) return;
  leaves_[h].alive = false;
  nodes_[cap_ + h].winner = kInvalid;
  free_.push_back(h);
  --size_;
  PullPath(h);
}

KineticMaxQueue::Handle KineticMaxQueue::Best(double x) {
  if (size_ == 0) {
    x_ = std::max(x_, x);
    return kInvalid;
  }
  if (x < x_) {
    x_ = x;
    Rebuild();
  } else if (x > x_) {
    x_ = x;
    Repair(1);
  }
  return nodes_[1].winner;
}

void KineticMaxQueue::Rescale(double factor, double x) {
  for (Leaf& l : leaves_)
    if (l.alive) l.alpha *= factor;
  x_ = x;
  Rebuild();
}

}  // namespace sloserve
