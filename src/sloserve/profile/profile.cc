#include "sloserve/profile/profile.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sloserve/core/did_you_mean.h"
#include "sloserve/core/embedded_files.h"
#include "sloserve/core/read_file.h"
#include "sloserve/profile/suite_cache.h"

namespace sloserve {
namespace {

template <typename Spec>
std::optional<uint32_t> FindByName(const std::vector<Spec>& specs, const std::string& name) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<TaskId> ProfileSuite::FindTask(const std::string& name) const {
  return FindByName(tasks_, name);
}
std::optional<VariantId> ProfileSuite::FindVariant(const std::string& name) const {
  return FindByName(variants_, name);
}
std::optional<HardwareId> ProfileSuite::FindHardware(const std::string& name) const {
  return FindByName(hardware_, name);
}

std::vector<VariantId> ProfileSuite::VariantsOfTask(TaskId task) const {
  std::vector<VariantId> out;
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (variants_[i].task == task) out.push_back(static_cast<VariantId>(i));
  }
  return out;
}

VariantId ProfileSuite::MostAccurateVariant(TaskId task) const {
  VariantId best = kNoId;
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (variants_[i].task != task) continue;
    if (best == kNoId || variants_[i].accuracy > variants_[best].accuracy)
      best = static_cast<VariantId>(i);
  }
  return best;
}

const std::vector<int>& ProfileSuite::BatchSizes(HardwareId hw, VariantId v) const {
  static const std::vector<int> kNone;
  auto it = latency_.find({hw, v});
  return it == latency_.end() ? kNone : it->second.batch_sizes;
}

const std::vector<int>& ProfileSuite::LoadBatchSizes(HardwareId hw, VariantId v) const {
  static const std::vector<int> kNone;
  auto it = load_latency_.find({hw, v});
  return it == load_latency_.end() ? kNone : it->second.batch_sizes;
}

int ProfileSuite::MaxBatch(HardwareId hw, VariantId v) const {
  const std::vector<int>& sizes = BatchSizes(hw, v);
  return sizes.empty() ? 0 : sizes.back();
}

const LatencyDistribution* ProfileSuite::Latency(HardwareId hw, VariantId v, int rows) const {
  return Lookup(latency_, hw, v, rows);
}

const LatencyDistribution* ProfileSuite::LoadLatency(HardwareId hw, VariantId v, int rows) const {
  // Resolve the batch size on the latency table so the load belongs to Latency(hw, v, rows).
  const std::optional<int> batch = ResolveBatch(hw, v, rows);
  return batch ? FindExact(load_latency_, hw, v, *batch) : nullptr;
}

const LatencyDistribution* ProfileSuite::ServiceLatency(HardwareId hw, VariantId v,
                                                        int rows) const {
  const std::optional<int> batch = ResolveBatch(hw, v, rows);
  if (!batch) return nullptr;
  if (const LatencyDistribution* sum = FindExact(service_latency_, hw, v, *batch)) return sum;
  return FindExact(latency_, hw, v, *batch);
}

std::optional<int> ProfileSuite::ResolveBatch(HardwareId hw, VariantId v, int rows) const {
  const std::vector<int>& sizes = BatchSizes(hw, v);
  auto pos = std::lower_bound(sizes.begin(), sizes.end(), rows);
  if (pos == sizes.end()) return std::nullopt;
  return *pos;
}

std::vector<std::pair<HardwareId, VariantId>> ProfileSuite::ProfiledPairs() const {
  std::vector<std::pair<HardwareId, VariantId>> out;
  out.reserve(latency_.size());
  for (const auto& [key, table] : latency_) out.push_back(key);
  return out;
}

TaskId ProfileSuite::AddTask(TaskSpec t) {
  tasks_.push_back(std::move(t));
  return static_cast<TaskId>(tasks_.size() - 1);
}

VariantId ProfileSuite::AddVariant(VariantSpec v) {
  variants_.push_back(std::move(v));
  return static_cast<VariantId>(variants_.size() - 1);
}

HardwareId ProfileSuite::AddHardware(HardwareSpec h) {
  hardware_.push_back(std::move(h));
  return static_cast<HardwareId>(hardware_.size() - 1);
}

void ProfileSuite::AddLatency(HardwareId hw, VariantId v, int rows, LatencyDistribution d) {
  Insert(latency_, hw, v, rows, std::move(d));
  UpdateServiceLatency(hw, v, rows);
}

void ProfileSuite::AddLoadLatency(HardwareId hw, VariantId v, int rows, LatencyDistribution d) {
  Insert(load_latency_, hw, v, rows, std::move(d));
  UpdateServiceLatency(hw, v, rows);
}

void ProfileSuite::RestoreDistribution(SampleTable table, HardwareId hw, VariantId v, int rows,
                                       LatencyDistribution d) {
  switch (table) {
    case SampleTable::kLatency:
      return Insert(latency_, hw, v, rows, std::move(d));
    case SampleTable::kLoad:
      return Insert(load_latency_, hw, v, rows, std::move(d));
    case SampleTable::kService:
      return Insert(service_latency_, hw, v, rows, std::move(d));
  }
}

void ProfileSuite::UpdateServiceLatency(HardwareId hw, VariantId v, int rows) {
  const LatencyDistribution* lat = FindExact(latency_, hw, v, rows);
  const LatencyDistribution* load = FindExact(load_latency_, hw, v, rows);
  if (lat == nullptr || load == nullptr || lat->size() != load->size()) {
    EraseExact(service_latency_, hw, v, rows);  // a replaced profile may have broken the pair
    return;
  }
  std::vector<int64_t> sum(lat->samples_us().begin(), lat->samples_us().end());
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += load->samples_us()[i];
  Insert(service_latency_, hw, v, rows, LatencyDistribution(std::move(sum)));
}

const LatencyDistribution* ProfileSuite::FindExact(
    const std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw, VariantId v,
    int rows) {
  auto it = m.find({hw, v});
  if (it == m.end()) return nullptr;
  const std::vector<int>& sizes = it->second.batch_sizes;
  auto pos = std::lower_bound(sizes.begin(), sizes.end(), rows);
  if (pos == sizes.end() || *pos != rows) return nullptr;
  return &it->second.dists[static_cast<size_t>(pos - sizes.begin())];
}

void ProfileSuite::EraseExact(std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw,
                              VariantId v, int rows) {
  auto it = m.find({hw, v});
  if (it == m.end()) return;
  Table& t = it->second;
  auto pos = std::lower_bound(t.batch_sizes.begin(), t.batch_sizes.end(), rows);
  if (pos == t.batch_sizes.end() || *pos != rows) return;
  t.dists.erase(t.dists.begin() + (pos - t.batch_sizes.begin()));
  t.batch_sizes.erase(pos);
  if (t.batch_sizes.empty()) m.erase(it);
}

const LatencyDistribution* ProfileSuite::Lookup(
    const std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw, VariantId v,
    int rows) {
  auto it = m.find({hw, v});
  if (it == m.end()) return nullptr;
  const std::vector<int>& sizes = it->second.batch_sizes;
  auto pos = std::lower_bound(sizes.begin(), sizes.end(), rows);
  if (pos == sizes.end()) return nullptr;
  return &it->second.dists[static_cast<size_t>(pos - sizes.begin())];
}

void ProfileSuite::Insert(std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw,
                          VariantId v, int rows, LatencyDistribution d) {
  Table& t = m[{hw, v}];
  auto pos = std::lower_bound(t.batch_sizes.begin(), t.batch_sizes.end(), rows);
  const size_t i = static_cast<size_t>(pos - t.batch_sizes.begin());
  if (pos != t.batch_sizes.end() && *pos == rows) {
    t.dists[i] = std::move(d);  // a repeated batch size replaces the earlier profile
    return;
  }
  t.batch_sizes.insert(pos, rows);
  t.dists.insert(t.dists.begin() + static_cast<std::ptrdiff_t>(i), std::move(d));
}

StatusOr<ProfileSuite> LoadProfileFile(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text,
                   ReadFileBounded(path, "profile file", kMaxInputFileBytes));
  return ParseProfileTextCached(text, path, DefaultProfileCacheDir());
}

std::string ProfilesDir() {
  if (const char* env = std::getenv("SLOSERVE_PROFILES_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return "";
}

std::vector<std::string> EmbeddedSuiteNames() {
  std::vector<std::string> names;
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.name.find('/') == std::string_view::npos && f.name.ends_with(kProfileExtension)) {
      names.emplace_back(
          f.name.substr(0, f.name.size() - std::string_view(kProfileExtension).size()));
    }
  }
  return names;
}

StatusOr<ProfileSuite> LoadSuite(const std::string& name_or_path) {
  if (name_or_path.empty()) return InvalidArgumentError("LoadSuite: empty suite name");
  if (name_or_path.find('/') != std::string::npos || EndsWith(name_or_path, kProfileExtension)) {
    return LoadProfileFile(name_or_path);
  }
  const std::string file = name_or_path + kProfileExtension;
  if (const std::string dir = ProfilesDir(); !dir.empty()) {
    return LoadProfileFile(dir + "/" + file);
  }
  if (const EmbeddedFile* f = FindEmbeddedFile(file)) {
    return ParseProfileTextCached(f->data, std::string(kEmbeddedPrefix) + file,
                                  DefaultProfileCacheDir());
  }
  const std::vector<std::string> known = EmbeddedSuiteNames();
  return NotFoundError("unknown suite '" + name_or_path + "' (" + DidYouMean(name_or_path, known) +
                       "embedded suites: " + JoinNames(known) + "; or give the path of a " +
                       kProfileExtension + " file)");
}

}  // namespace sloserve
