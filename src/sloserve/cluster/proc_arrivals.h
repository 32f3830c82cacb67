#pragma once
// The thesis' requests ("procs", docs/model-aware.md) around the engine, as the driver's
// arrival source: a proc arrives, waits in the central queue until its policy places it
// (the shared rules, placement_rules.h, on the proxies as the engine and the executor
// show them plus the procs' own state), reserves `proc_cores` on the machine it is spawned
// on, runs its CPU pre-processing, pays the network transfer when its proxy is another
// machine's, and then is submitted to the engine, which queues it at the proxy's worker
// (one replica, first come first served: ProxyExecutor), loads its model if the worker does
// not hold it (a cold start, evicting as the machine's memory requires) and runs it; when
// the engine reports it done, its post-processing runs and it exits, freeing its cores.
//
// Each stage's end is an item the driver takes, in time order, through NextArrival and
// AdmitNext, after the executor's results of the same instant: there is no event loop
// here, the driver's is the only one. Deterministic for a config and seed.
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include "sloserve/cluster/cluster_config.h"
#include "sloserve/cluster/cluster_result.h"
#include "sloserve/cluster/directed_placement.h"
#include "sloserve/cluster/placement_rules.h"
#include "sloserve/engine/driver.h"
#include "sloserve/exec/proxy_executor.h"

namespace sloserve {

class ProcArrivals : public ArrivalSource {
 public:
  // Worker i is machine i's proxy (cluster_deployment.h); `executor` and `placement` are
  // the engine's. Observes the executor (loads and batches as they are sent).
  ProcArrivals(const ClusterConfig& config, ClusterPolicy policy, ProxyExecutor* executor,
               DirectedPlacement* placement);
  // The engine's completions come here (Engine::set_sink).
  void OnRecord(const QueryRecord& r);

  TimePoint NextArrival() const override;
  void AdmitNext(Engine& engine, TimePoint now) override;

  // After the run: every proc's record and the totals.
  ClusterResult Result();

 private:
  enum class Stage { kArrive, kPreDone, kAtProxy, kLoadDone, kExit };
  struct Item {
    TimePoint at;
    uint64_t seq;
    Stage stage;
    int who;                // proc, or machine (kLoadDone)
    int model = -1;         // kLoadDone: the model loaded
    bool prefetch = false;  // kLoadDone: a load ahead of demand
    bool operator>(const Item& o) const { return at > o.at || (at == o.at && seq > o.seq); }
  };
  struct Proc {
    int model = 0;
    TimePoint arrival{}, spawn{}, exit{};
    int machine = -1, proxy = -1;
    bool cold = false;
    bool started = false;  // its proxy started serving it (its load or its inference)
    bool refused = false;
    std::string refusal;
    LatencyEstimates estimates;
    bool estimated = false;
    ClusterPolicy chosen = ClusterPolicy::kRandom;
  };
  struct Machine {
    int cores_free = 0;
    int ongoing = 0;             // procs pointed at its proxy and not exited
    std::vector<int> unstarted;  // per model: procs pointed here the proxy has not started
    std::deque<int> at_proxy;    // procs submitted to its worker, not started, in order
    int loading_model = -1;      // the load under way (until its kLoadDone item)
    TimePoint load_end{};
    bool prefetching = false;      // that load is ahead of demand
    bool prefetch_waited = false;  // a proc waits for it (counted once as a cold start)
  };
  // Running mean with the profile's value as one prior observation.
  struct Learned {
    double sum = 0;
    int n = 0;
    void Add(double x) {
      sum += x;
      ++n;
    }
    double Mean() const { return sum / n; }
  };

  void Push(TimePoint at, Stage s, int who, int model = -1, bool prefetch = false) {
    items_.push({at, seq_++, s, who, model, prefetch});
  }
  void Arrive(int model, TimePoint now);
  void Schedule(TimePoint now);
  std::vector<ProxyState> ProxiesFor(int model, TimePoint now) const;
  void Place(int p, const PlacementChoice& d, TimePoint now);
  void AtProxy(int p, TimePoint now);
  void MaybePrefetch(int model, TimePoint now);
  void Exit(int p, TimePoint now);
  void Refuse(int p, std::string why, TimePoint now);
  void NextOfPhase(TimePoint now);  // a proc exited: the phased workload goes on
  // Proc `p` (-1: the first submitted to worker `w` and not started) starts being served.
  void Started(WorkerId w, int p, bool cold);

  bool Contains(int m, int model) const;
  double Backlog(int m, TimePoint now) const;
  ModelTimes TimesOf(int model) const {
    return {infer_[model].Mean(), pre_[model].Mean(), post_[model].Mean(), load_[model].Mean()};
  }

  const ClusterConfig& cfg_;
  ClusterPolicy policy_;
  ProxyExecutor* executor_;
  DirectedPlacement* placement_;
  Engine* engine_ = nullptr;  // set by the first AdmitNext
  Rng rng_;
  PopularityWindow window_;
  std::vector<Proc> procs_;
  std::vector<Machine> machines_;
  std::deque<int> waiting_;  // the central queue
  std::priority_queue<Item, std::vector<Item>, std::greater<>> items_;
  uint64_t seq_ = 0;
  std::vector<Learned> infer_, pre_, post_, load_;
  bool next_load_prefetch_ = false;  // the load RequestLoad is about to send is a prefetch
  ClusterResult result_;
  size_t phase_ = 0;
  int issued_ = 0, exited_in_phase_ = 0;
};

}  // namespace sloserve
