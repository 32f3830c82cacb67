#include "sloserve/profile/online_exec_table.h"

namespace sloserve {

StatusOr<OnlineExecTable> OnlineExecTable::Create(ExecTimeTable offline,
                                                  OnlineProfilerOptions options) {
  ASSIGN_OR_RETURN(OnlineExecProfiler proto, OnlineExecProfiler::Create(options));
  std::vector<OnlineExecProfiler> profilers(offline.num_variants(), proto);
  return OnlineExecTable(std::move(offline), std::move(profilers));
}

void OnlineExecTable::Record(VariantId v, AppId app, Duration alone, TimePoint now) {
  if (alone.count() < 0 || !offline_.ForApp(v, app)) return;  // nothing to learn into
  profilers_[v].Record(app, alone, now);
  ++recorded_;
}

bool OnlineExecTable::Refresh(TimePoint now) {
  bool changed = false;
  for (OnlineExecProfiler& p : profilers_) changed = p.Refresh(now) > 0 || changed;
  if (!changed) return false;
  // Rebuilt from the offline table so a pair is either learned or offline, never mixed.
  table_ = offline_;
  learned_pairs_ = 0;
  for (VariantId v = 0; v < profilers_.size(); ++v) {
    for (AppId a = 0; a < offline_.apps().size(); ++a) {
      const ExecCdf* learned = profilers_[v].Snapshot(a);
      if (learned && table_.Replace(v, a, *learned).ok()) ++learned_pairs_;
    }
  }
  return true;
}

}  // namespace sloserve
