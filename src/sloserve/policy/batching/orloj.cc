#include "sloserve/policy/batching/orloj.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "sloserve/policy/per_worker.h"

namespace sloserve {
namespace {

// Position of (deadline, id) in a queue kept in (deadline, id) order, or -1.
int64_t FindPosition(const QueueView& queue, TimePoint deadline, QueryId id) {
  size_t lo = 0, hi = queue.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const Query& q = queue.at(mid);
    if (q.deadline < deadline || (q.deadline == deadline && q.id < id)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < queue.size() && queue.at(lo).id == id) return static_cast<int64_t>(lo);
  return -1;
}

}  // namespace

namespace orloj_options {
const KeyDecl kB{.name = "b",
                 .type = KeyType::kNumber,
                 .default_value = "1e-4",
                 .unit = "1/ms",
                 .min = 1e-9,
                 .max = 10,
                 .help = "decay rate of the priority score over time"};
const KeyDecl kFeasibleQuantile{.name = "feasible_quantile",
                                .type = KeyType::kNumber,
                                .default_value = "0.5",
                                .min = 0,
                                .max = 1,
                                .help =
                                    "quantile of the execution-time histogram a request must "
                                    "meet its deadline at to be feasible"};
const KeyDecl kScoreBins{.name = "score_bins",
                         .type = KeyType::kInteger,
                         .default_value = "32",
                         .min = 1,
                         .max = 1024,
                         .help = "bins of the score's execution-time histograms"};
const KeyDecl kCostSteps{.name = "cost_steps",
                         .type = KeyType::kString,
                         .default_value = "0:1",
                         .help =
                             "cost of lateness as offset_ms:cost,... (1 to 8 steps; offsets "
                             "in [0, 86400000] ms, costs > 0)"};
const KeyDecl kOfflineScale{.name = "offline_scale",
                            .type = KeyType::kNumberList,
                            .min = 0,
                            .min_exclusive = true,
                            .help =
                                "factors scaling the offline execution-time histograms: one, "
                                "or one per exec_hist app; default: as profiled"};
const KeyDecl kOnlineProfile{.name = "online_profile",
                             .type = KeyType::kBool,
                             .default_value = "false",
                             .help =
                                 "learn the execution-time histograms online from completed "
                                 "batches"};
const KeyDecl kProfileRefreshS{.name = "profile_refresh_s",
                               .type = KeyType::kNumber,
                               .default_value = "5",
                               .unit = "s",
                               .min = 0,
                               .max = 86400,
                               .min_exclusive = true,
                               .help = "online profile: seconds between histogram refreshes"};
const KeyDecl kProfileWindowS{.name = "profile_window_s",
                              .type = KeyType::kNumber,
                              .default_value = "600",
                              .unit = "s",
                              .min = 0,
                              .max = 30 * 86400,
                              .min_exclusive = true,
                              .help = "online profile: samples older than this are forgotten"};
const KeyDecl kProfileSampleEvery{.name = "profile_sample_every",
                                  .type = KeyType::kInteger,
                                  .default_value = "1",
                                  .min = 1,
                                  .max = 1'000'000,
                                  .help = "online profile: keep one completed batch in this many"};
const KeyDecl kProfileMinSamples{.name = "profile_min_samples",
                                 .type = KeyType::kInteger,
                                 .default_value = "30",
                                 .min = 1,
                                 .max = 1'000'000,
                                 .help =
                                     "online profile: samples before a learned histogram "
                                     "replaces the offline one"};
const KeyDecl kProfileBins{.name = "profile_bins",
                           .type = KeyType::kInteger,
                           .default_value = "64",
                           .min = 1,
                           .max = 1024,
                           .help = "online profile: bins of a learned histogram"};
}  // namespace orloj_options

StatusOr<std::vector<CostStep>> OrlojBatching::ParseCostSteps(const std::string& text) {
  std::vector<CostStep> steps;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t colon = item.find(':');
    CostStep s;
    const std::optional<double> offset =
        colon == std::string::npos ? std::nullopt : ParseNumber(item.substr(0, colon));
    const std::optional<double> cost =
        colon == std::string::npos ? std::nullopt : ParseNumber(item.substr(colon + 1));
    if (!offset || !cost) {
      return InvalidArgumentError(
          "orloj: option 'cost_steps': expected offset_ms:cost,..., got \"" + text + "\"");
    }
    s.offset_ms = *offset;
    s.cost = *cost;
    // Offsets bounded (a day): converted to microseconds (issue 37).
    if (!(s.offset_ms >= 0 && s.offset_ms <= 86'400'000) || s.cost <= 0)
      return InvalidArgumentError(
          "orloj: option 'cost_steps': offsets must be in [0, 86400000] ms, costs > 0");
    steps.push_back(s);
  }
  if (steps.empty() || steps.size() > 8)
    return InvalidArgumentError("orloj: option 'cost_steps': 1 to 8 steps");
  return steps;
}

StatusOr<std::unique_ptr<BatchingPolicy>> OrlojBatching::Create(
    const PolicyParams& params, std::unique_ptr<SelectionPolicy> sel) {
  Options o;
  namespace opt = orloj_options;
  ASSIGN_OR_RETURN(o.score.b_per_ms, params.GetDouble(opt::kB));
  ASSIGN_OR_RETURN(o.score.feasible_quantile, params.GetDouble(opt::kFeasibleQuantile));
  ASSIGN_OR_RETURN(int64_t bins, params.GetInt(opt::kScoreBins));
  o.score.bins = static_cast<int>(bins);
  ASSIGN_OR_RETURN(std::string steps, params.GetString(opt::kCostSteps));
  ASSIGN_OR_RETURN(o.score.steps, ParseCostSteps(steps));
  ASSIGN_OR_RETURN(o.offline_scale, params.GetNumberList(opt::kOfflineScale));
  ASSIGN_OR_RETURN(o.online_profile, params.GetBool(opt::kOnlineProfile));
  ASSIGN_OR_RETURN(double refresh_s, params.GetDouble(opt::kProfileRefreshS));
  o.profile_refresh = Micros(static_cast<int64_t>(std::llround(refresh_s * 1e6)));
  ASSIGN_OR_RETURN(double window_s, params.GetDouble(opt::kProfileWindowS));
  o.profiler.window = Micros(static_cast<int64_t>(std::llround(window_s * 1e6)));
  ASSIGN_OR_RETURN(int64_t every, params.GetInt(opt::kProfileSampleEvery));
  o.profiler.sample_every = static_cast<int>(every);
  ASSIGN_OR_RETURN(int64_t min_samples, params.GetInt(opt::kProfileMinSamples));
  o.profiler.min_samples = static_cast<int>(min_samples);
  ASSIGN_OR_RETURN(int64_t profile_bins, params.GetInt(opt::kProfileBins));
  o.profiler.bins = static_cast<int>(profile_bins);
  // The profiler's options mean nothing without it: say so rather than ignore them.
  for (const KeyDecl* key :
       {&opt::kProfileRefreshS, &opt::kProfileWindowS, &opt::kProfileSampleEvery,
        &opt::kProfileMinSamples, &opt::kProfileBins}) {
    if (params.Has(*key) && !o.online_profile)
      return InvalidArgumentError("orloj: option '" + key->name + "' needs online_profile: true");
  }
  if (!sel) return InvalidArgumentError("orloj batching needs a selection policy");
  return std::unique_ptr<BatchingPolicy>(new OrlojBatching(std::move(o), std::move(sel)));
}

Status OrlojBatching::Init(const PolicyContext& ctx) {
  suite_ = ctx.suite;
  exec_ = ExecTimeTable::Build(*suite_);
  const std::vector<double>& f = options_.offline_scale;
  const size_t napps = exec_.apps().size();
  if (!f.empty() && (napps == 0 || (f.size() != 1 && f.size() != napps))) {
    return InvalidArgumentError("orloj: option 'offline_scale': " + std::to_string(f.size()) +
                                " factors for a suite with " + std::to_string(napps) +
                                " exec_hist apps (give one, or one per app)");
  }
  for (VariantId v = 0; v < exec_.num_variants() && !f.empty(); ++v) {
    for (AppId a = 0; a < napps; ++a) {
      const ExecCdf* c = exec_.ForApp(v, a);
      if (c) RETURN_IF_ERROR(exec_.Replace(v, a, c->Affine(0, f.size() == 1 ? f[0] : f[a])));
    }
  }
  online_.reset();
  if (options_.online_profile) {
    if (napps == 0)
      return InvalidArgumentError(
          "orloj: online_profile needs exec_hist records (a dynamic model) in the suite");
    ASSIGN_OR_RETURN(OnlineExecTable t, OnlineExecTable::Create(exec_, options_.profiler));
    online_.emplace(std::move(t));
  }
  workers_.assign(ctx.workers.size(), WorkerState());  // grows as workers are added
  return selection_->Init(ctx);
}

void OrlojBatching::OnBatchComplete(const BatchCompletion& c) {
  if (!online_) return;
  for (const CompletedRequest& r : c.requests) online_->Record(c.variant, r.app, r.solo, c.now);
  if (c.now < next_refresh_) return;
  next_refresh_ = c.now + options_.profile_refresh;
  if (online_->Refresh(c.now)) RebuildTables();
}

void OrlojBatching::RebuildTables() {
  for (auto& [key, table] : tables_) {
    const auto [hw, v, max_rows] = key;
    StatusOr<OrlojScoreTable> t = BuildTable(hw, v, max_rows);
    if (t.ok()) table = std::make_unique<OrlojScoreTable>(*std::move(t));  // else keep the old
  }
  // Pointers, handles and milestones refer to the old tables: start over from the queue.
  for (WorkerState& ws : workers_) ws.table = nullptr;
  ++profile_rebuilds_;
}

void OrlojBatching::OnArrival(const Query& q, TimePoint now) {
  selection_->OnArrival(q, now);
  unplaced_.push_back({q.id, q.deadline, q.app, q.task, q.size});
  if (unplaced_.size() > 200000) {  // queries the engine refused never reach a worker
    std::erase_if(unplaced_, [&](const Pending& p) { return p.deadline + Seconds(60) < now; });
  }
}

const OrlojScoreTable* OrlojBatching::TableFor(HardwareId hw, VariantId v, int max_rows) {
  auto key = std::make_tuple(hw, v, max_rows);
  auto it = tables_.find(key);
  if (it != tables_.end()) return it->second.get();
  StatusOr<OrlojScoreTable> t = BuildTable(hw, v, max_rows);
  std::unique_ptr<OrlojScoreTable> p;
  if (t.ok()) p = std::make_unique<OrlojScoreTable>(*std::move(t));
  const OrlojScoreTable* raw = p.get();
  tables_[key] = std::move(p);
  return raw;
}

StatusOr<OrlojScoreTable> OrlojBatching::BuildTable(HardwareId hw, VariantId v,
                                                    int max_rows) const {
  std::vector<int> sizes = {1};
  for (int b : suite_->BatchSizes(hw, v))
    if (b > 1 && b <= max_rows) sizes.push_back(b);
  return OrlojScoreTable::Build(*suite_, exec_times(), hw, v, sizes, options_.score);
}

void OrlojBatching::Reset(WorkerState& ws, const OrlojScoreTable* table, VariantId v, int max_rows,
                          TimePoint now) {
  ws = WorkerState();
  ws.variant = v;
  ws.max_rows = max_rows;
  ws.table = table;
  ws.base = now;
  const size_t nk = static_cast<size_t>(table->num_sizes());
  ws.queues.assign(nk, KineticMaxQueue(64));
  ws.owner.assign(nk, {});
}

double OrlojBatching::X(const WorkerState& ws, TimePoint now) const {
  return std::exp(options_.score.b_per_ms * 1e-3 * static_cast<double>((now - ws.base).count()));
}

void OrlojBatching::MaybeRebase(WorkerState& ws, TimePoint now) {
  const double b_us = options_.score.b_per_ms * 1e-3;
  if (b_us * static_cast<double>((now - ws.base).count()) <= options_.rebase_exponent) return;
  const double factor = std::exp(b_us * static_cast<double>((now - ws.base).count()));
  ws.base = now;
  for (KineticMaxQueue& q : ws.queues) q.Rescale(factor, 1.0);
}

OrlojBatching::AddResult OrlojBatching::Add(WorkerState& ws, const Pending& q, TimePoint now) {
  const OrlojScoreTable& t = *ws.table;
  if (q.size > ws.max_rows || q.task != suite_->variants()[ws.variant].task)
    return AddResult::kReject;
  bool unknown = false;
  const int slot = t.SlotOf(q.app, &unknown);
  if (unknown) ++unknown_apps_;
  uint32_t r;
  if (!ws.free.empty()) {
    r = ws.free.back();
    ws.free.pop_back();
  } else {
    r = static_cast<uint32_t>(ws.reqs.size());
    ws.reqs.emplace_back();
    const size_t nk = static_cast<size_t>(t.num_sizes());
    ws.handles.resize(ws.reqs.size() * nk, KineticMaxQueue::kInvalid);
    ws.bins.resize(ws.reqs.size() * nk * options_.score.steps.size(), -2);
  }
  Req& req = ws.reqs[r];
  req.id = q.id;
  req.deadline = q.deadline;
  req.slot = slot;
  req.feasible = t.num_sizes();
  req.live = true;
  ++ws.tracked;
  for (int k = 0; k < t.num_sizes(); ++k)
    ws.handles[static_cast<size_t>(r) * static_cast<size_t>(t.num_sizes()) +
               static_cast<size_t>(k)] = KineticMaxQueue::kInvalid;
  if (!Refresh(ws, r, now, /*force_lines=*/true)) return AddResult::kTimedOut;
  return AddResult::kAdded;
}

void OrlojBatching::Remove(WorkerState& ws, uint32_t r) {
  Req& req = ws.reqs[r];
  if (!req.live) return;
  const size_t nk = ws.queues.size();
  for (size_t k = 0; k < nk; ++k) {
    KineticMaxQueue::Handle& h = ws.handles[r * nk + k];
    if (h != KineticMaxQueue::kInvalid) ws.queues[k].Erase(h);
    h = KineticMaxQueue::kInvalid;
  }
  req.live = false;
  ++req.gen;
  ws.free.push_back(r);
  --ws.tracked;
}

bool OrlojBatching::Refresh(WorkerState& ws, uint32_t r, TimePoint now, bool force_lines) {
  const OrlojScoreTable& t = *ws.table;
  Req& req = ws.reqs[r];
  const size_t nk = ws.queues.size();
  const size_t ns = options_.score.steps.size();
  // Lines 10-14: leave the queues of batch sizes that can no longer meet the deadline.
  const double slack = static_cast<double>((req.deadline - now).count());
  while (req.feasible > 0 && t.EstimateUs(req.slot, req.feasible - 1) > slack) {
    const size_t k = static_cast<size_t>(req.feasible - 1);
    KineticMaxQueue::Handle& h = ws.handles[r * nk + k];
    if (h != KineticMaxQueue::kInvalid) ws.queues[k].Erase(h);
    h = KineticMaxQueue::kInvalid;
    --req.feasible;
  }
  if (req.feasible == 0) {
    Remove(ws, r);
    return false;
  }
  int j[8];
  for (int k = 0; k < req.feasible; ++k) {
    const size_t base = (r * nk + static_cast<size_t>(k)) * ns;
    bool changed = force_lines;
    for (size_t s = 0; s < ns; ++s) {
      const double s_us = slack + options_.score.steps[s].offset_ms * 1e3;
      j[s] = t.BinOf(req.slot, k, s_us);
      if (ws.bins[base + s] != j[s]) changed = true;
      ws.bins[base + s] = j[s];
    }
    KineticMaxQueue::Handle& h = ws.handles[r * nk + static_cast<size_t>(k)];
    if (!changed && h != KineticMaxQueue::kInvalid) continue;
    double alpha, beta;
    t.Line(req.slot, k, j, req.deadline, ws.base, &alpha, &beta);
    if (h == KineticMaxQueue::kInvalid) {
      h = ws.queues[static_cast<size_t>(k)].Insert(alpha, beta, req.id);
      auto& owner = ws.owner[static_cast<size_t>(k)];
      if (owner.size() <= h) owner.resize(static_cast<size_t>(h) * 2 + 16);
      owner[h] = r;
    } else {
      ws.queues[static_cast<size_t>(k)].Update(h, alpha, beta);
    }
  }
  Schedule(ws, r);
  return true;
}

void OrlojBatching::Schedule(WorkerState& ws, uint32_t r) {
  const OrlojScoreTable& t = *ws.table;
  const Req& req = ws.reqs[r];
  const size_t nk = ws.queues.size();
  const size_t ns = options_.score.steps.size();
  // Expiry of the largest feasible size: now + est > D  <=>  now >= D - ceil(est) + 1.
  const double est = t.EstimateUs(req.slot, req.feasible - 1);
  TimePoint next = req.deadline - Micros(static_cast<int64_t>(std::ceil(est))) + Micros(1);
  for (int k = 0; k < req.feasible; ++k) {
    for (size_t s = 0; s < ns; ++s) {
      const int j = ws.bins[(r * nk + static_cast<size_t>(k)) * ns + s];
      next = std::min(next, t.NextMilestone(req.slot, k, static_cast<int>(s), j, req.deadline));
    }
  }
  ws.events.push({next, r, req.gen});
}

void OrlojBatching::Collect(const QueueView& queue,
                            std::vector<std::pair<TimePoint, QueryId>>* keys,
                            std::vector<uint32_t>* out) {
  for (const auto& [d, id] : *keys) {
    int64_t p = FindPosition(queue, d, id);
    if (p >= 0) out->push_back(static_cast<uint32_t>(p));
  }
  keys->clear();
  std::sort(out->begin(), out->end());
}

void OrlojBatching::NextBatch(const WorkerView& worker, const QueueView& queue, TimePoint now,
                              BatchDecision* out) {
  out->Clear();
  if (queue.empty()) return;
  SelectionDecision sel = selection_->Choose(worker, queue, queue.front(), now);
  const OrlojScoreTable* table = sel.variant == kNoId || sel.max_rows <= 0
                                     ? nullptr
                                     : TableFor(worker.hardware, sel.variant, sel.max_rows);
  if (!table) {  // nothing here can serve the head: report it (the engine asks again)
    out->reject.push_back(0);
    return;
  }
  WorkerState& ws = PerWorker(workers_, worker.id);  // a new worker: fresh state
  // ORLOJ batches count requests, not rows: a queued request of more rows than the head's
  // decision still runs on this variant if its profile covers them (a multi-row request
  // at the head gets a variant that holds it, RowFitSelection).
  const int request_rows = std::max(sel.max_rows, suite_->MaxBatch(worker.hardware, sel.variant));
  if (ws.table != table || ws.variant != sel.variant || ws.max_rows != request_rows)
    Reset(ws, table, sel.variant, request_rows, now);
  MaybeRebase(ws, now);

  auto add = [&](const Pending& p) {
    switch (Add(ws, p, now)) {
      case AddResult::kAdded:
        break;
      case AddResult::kTimedOut:
        ++timed_out_;
        drop_keys_.push_back({p.deadline, p.id});
        break;
      case AddResult::kReject:
        reject_keys_.push_back({p.deadline, p.id});
        break;
    }
  };
  // Arrivals that reached this worker's queue since the last call.
  for (size_t i = 0; i < unplaced_.size();) {
    if (FindPosition(queue, unplaced_[i].deadline, unplaced_[i].id) >= 0) {
      add(unplaced_[i]);
      unplaced_[i] = unplaced_.back();
      unplaced_.pop_back();
    } else {
      ++i;
    }
  }
  const size_t accounted = ws.tracked + drop_keys_.size() + reject_keys_.size();
  if (accounted != queue.size()) {  // out of sync (e.g. queries we never saw): rebuild
    Reset(ws, table, sel.variant, request_rows, now);
    drop_keys_.clear();
    reject_keys_.clear();
    for (size_t i = 0; i < queue.size(); ++i) {
      const Query& q = queue.at(i);
      add({q.id, q.deadline, q.app, q.task, q.size});
    }
  }
  // Lines 1-14: milestones and timeouts that came due.
  while (!ws.events.empty() && ws.events.top().at <= now) {
    Event e = ws.events.top();
    ws.events.pop();
    Req& req = ws.reqs[e.req];
    if (!req.live || req.gen != e.gen) continue;
    const TimePoint d = req.deadline;
    const QueryId id = req.id;
    if (!Refresh(ws, e.req, now, /*force_lines=*/false)) {
      ++timed_out_;
      drop_keys_.push_back({d, id});
    }
  }
  // Lines 15-21: the largest batch size that can be filled.
  int cand = -1;
  for (int k = table->num_sizes() - 1; k >= 0; --k) {
    if (ws.queues[static_cast<size_t>(k)].size() >=
        static_cast<size_t>(table->batch_sizes()[static_cast<size_t>(k)])) {
      cand = k;
      break;
    }
  }
  if (cand >= 0) {  // Line 22: PopBatch by score.
    const double x = X(ws, now);
    KineticMaxQueue& q = ws.queues[static_cast<size_t>(cand)];
    for (int i = 0; i < table->batch_sizes()[static_cast<size_t>(cand)]; ++i) {
      KineticMaxQueue::Handle h = q.Best(x);
      if (h == KineticMaxQueue::kInvalid) break;
      const uint32_t r = ws.owner[static_cast<size_t>(cand)][h];
      take_keys_.push_back({ws.reqs[r].deadline, ws.reqs[r].id});
      Remove(ws, r);
    }
  }
  Collect(queue, &take_keys_, &out->take);
  Collect(queue, &drop_keys_, &out->drop);
  Collect(queue, &reject_keys_, &out->reject);
  if (!out->take.empty()) {
    out->kind = BatchDecision::Kind::kRun;
    out->variant = sel.variant;
  }
}

}  // namespace sloserve
