#pragma once
// A profile suite: the measured facts one experiment needs. Tasks, model variants
// (accuracy, memory, load time), hardware types (price, cores) and latency samples per
// (hardware, variant, batch rows), plus optional per-(variant, app) execution-time
// histograms for dynamic models. Format: docs/profiles.md. Immutable once loaded.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/ids.h"
#include "sloserve/core/status.h"
#include "sloserve/core/time.h"
#include "sloserve/profile/latency_distribution.h"

namespace sloserve {

struct TaskSpec {
  std::string name;
  Duration default_slo{};
  // Declared input tensor for the KServe v2 metadata: datatype and shape (-1 = batch dim).
  std::string input_name = "input";
  std::string input_datatype = "FP32";
  std::vector<int64_t> input_shape = {-1};
  // Declared output tensor (a model repository's; emulated models answer these defaults).
  std::string output_name = "output";
  std::string output_datatype = "FP32";
  std::vector<int64_t> output_shape = {-1, 1};
};

struct VariantSpec {
  std::string name;
  TaskId task = 0;
  double accuracy = 0;  // percent, e.g. 69.758
  double memory_mb = 0;
  Duration load_time{};
};

struct HardwareSpec {
  std::string name;
  double price_per_hour = 0;  // USD
  int cores = 1;
  double memory_gb = 0;
};

// Execution time of one request alone, for one (variant, app): an empirical histogram.
struct ExecHistogram {
  std::string app;
  VariantId variant = 0;
  Duration bin_width{};
  Duration first_bin_start{};
  std::vector<double> weights;  // relative frequency per bin (need not sum to 1)
};

// One point of a measured capacity curve (InfAdapter): the highest request rate one
// (hardware, variant) sustains under a latency SLA, with the p99 measured at that rate.
struct CapacityPoint {
  HardwareId hardware = 0;
  VariantId variant = 0;
  Duration slo{};
  std::optional<Duration> p99;  // absent when the source has no measurement
  double capacity_rps = 0;
  double saturation_rps = 0;  // throughput when overloaded
};

class ProfileSuite {
 public:
  const std::string& name() const { return name_; }
  const std::string& provenance() const { return provenance_; }
  const std::vector<TaskSpec>& tasks() const { return tasks_; }
  const std::vector<VariantSpec>& variants() const { return variants_; }
  const std::vector<HardwareSpec>& hardware() const { return hardware_; }
  const std::vector<ExecHistogram>& exec_histograms() const { return exec_histograms_; }
  const std::vector<CapacityPoint>& capacity_points() const { return capacity_points_; }

  std::optional<TaskId> FindTask(const std::string& name) const;
  std::optional<VariantId> FindVariant(const std::string& name) const;
  std::optional<HardwareId> FindHardware(const std::string& name) const;
  std::vector<VariantId> VariantsOfTask(TaskId task) const;
  // The task's most accurate variant (the first of equals); kNoId when it has none.
  VariantId MostAccurateVariant(TaskId task) const;

  // Batch sizes (rows) profiled for (hardware, variant), ascending; empty if none.
  const std::vector<int>& BatchSizes(HardwareId hw, VariantId v) const;
  int MaxBatch(HardwareId hw, VariantId v) const;
  // Batch sizes that have a load component (exactly; LoadLatency rounds up like Latency).
  const std::vector<int>& LoadBatchSizes(HardwareId hw, VariantId v) const;
  // Latency for `rows` rows: the distribution at the smallest profiled batch >= rows
  // (Kairos rounds query sizes up to the next profiled size). nullptr when rows exceeds
  // the largest profiled batch or (hw, v) has no profile.
  const LatencyDistribution* Latency(HardwareId hw, VariantId v, int rows) const;
  // Data-loading component added to the service time (Kairos), at the batch size that
  // Latency(hw, v, rows) resolves to; nullptr when that batch size has none.
  const LatencyDistribution* LoadLatency(HardwareId hw, VariantId v, int rows) const;
  // Service time as Kairos replays it: latency + load component, summed sample by sample
  // (they were measured together). Equals Latency() when there is no load component or
  // the two sample lists are not the same length.
  const LatencyDistribution* ServiceLatency(HardwareId hw, VariantId v, int rows) const;
  // (hardware, variant) pairs that have latency profiles, ascending.
  std::vector<std::pair<HardwareId, VariantId>> ProfiledPairs() const;

  // --- building (used by loaders and tests) ---
  void set_name(std::string n) { name_ = std::move(n); }
  void set_provenance(std::string p) { provenance_ = std::move(p); }
  TaskId AddTask(TaskSpec t);
  VariantId AddVariant(VariantSpec v);
  HardwareId AddHardware(HardwareSpec h);
  // A stated price replacing the measured one (a config's `hardware_prices:`).
  void SetHardwarePrice(HardwareId hw, double price_per_hour) {
    hardware_[hw].price_per_hour = price_per_hour;
  }
  void AddLatency(HardwareId hw, VariantId v, int rows, LatencyDistribution d);
  void AddLoadLatency(HardwareId hw, VariantId v, int rows, LatencyDistribution d);
  void AddExecHistogram(ExecHistogram h) { exec_histograms_.push_back(std::move(h)); }
  void AddCapacityPoint(CapacityPoint p) { capacity_points_.push_back(p); }
  // The hash of the model file a measured variant was profiled from (HashModelFile,
  // model_file_hash.h), so a server can tell a stale profile; absent in older suites.
  void SetModelHash(VariantId v, uint64_t hash) { model_hashes_[v] = hash; }
  std::optional<uint64_t> ModelHash(VariantId v) const {
    auto it = model_hashes_.find(v);
    return it == model_hashes_.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  }
  const std::map<VariantId, uint64_t>& model_hashes() const { return model_hashes_; }

  // --- the suite cache (suite_cache.h) stores and restores the sample tables as they are ---
  enum class SampleTable : uint32_t { kLatency = 0, kLoad = 1, kService = 2 };
  // fn(table, hw, v, rows, distribution) for every stored distribution.
  template <typename Fn>
  void ForEachDistribution(Fn&& fn) const {
    const std::pair<SampleTable, const TableMap*> tables[] = {
        {SampleTable::kLatency, &latency_},
        {SampleTable::kLoad, &load_latency_},
        {SampleTable::kService, &service_latency_}};
    for (const auto& [kind, map] : tables) {
      for (const auto& [key, t] : *map) {
        for (size_t i = 0; i < t.batch_sizes.size(); ++i) {
          fn(kind, key.first, key.second, t.batch_sizes[i], t.dists[i]);
        }
      }
    }
  }
  // Stores d in one table as is (AddLatency/AddLoadLatency also derive the service table).
  void RestoreDistribution(SampleTable table, HardwareId hw, VariantId v, int rows,
                           LatencyDistribution d);

 private:
  struct Table {
    std::vector<int> batch_sizes;            // ascending
    std::vector<LatencyDistribution> dists;  // parallel to batch_sizes
  };
  using TableMap = std::map<std::pair<HardwareId, VariantId>, Table>;
  static const LatencyDistribution* Lookup(
      const std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw, VariantId v,
      int rows);
  // The smallest profiled batch size >= rows, if any.
  std::optional<int> ResolveBatch(HardwareId hw, VariantId v, int rows) const;
  void UpdateServiceLatency(HardwareId hw, VariantId v, int rows);
  static const LatencyDistribution* FindExact(
      const std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw, VariantId v,
      int rows);
  static void EraseExact(std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw,
                         VariantId v, int rows);
  static void Insert(std::map<std::pair<HardwareId, VariantId>, Table>& m, HardwareId hw,
                     VariantId v, int rows, LatencyDistribution d);

  std::string name_;
  std::string provenance_;
  std::vector<TaskSpec> tasks_;
  std::vector<VariantSpec> variants_;
  std::vector<HardwareSpec> hardware_;
  std::vector<ExecHistogram> exec_histograms_;
  std::vector<CapacityPoint> capacity_points_;
  std::map<VariantId, uint64_t> model_hashes_;
  std::map<std::pair<HardwareId, VariantId>, Table> latency_;
  std::map<std::pair<HardwareId, VariantId>, Table> load_latency_;
  std::map<std::pair<HardwareId, VariantId>, Table> service_latency_;  // latency + load
};

// File extension of profile suites; LoadSuite("x") reads ProfilesDir()/x.prof.
inline constexpr char kProfileExtension[] = ".prof";

// Parses a profile file (docs/profiles.md). Errors name the file, line and field. Files of
// 1 MB or more (and the embedded suites) go through the suite cache (suite_cache.h).
StatusOr<ProfileSuite> LoadProfileFile(const std::string& path);
StatusOr<ProfileSuite> ParseProfileText(std::string_view text, const std::string& origin);
// Writes the text form; ParseProfileText(WriteProfileText(s)) reproduces s.
std::string WriteProfileText(const ProfileSuite& suite);
// Resolves a suite by name ("ramsis-image": compiled into the binary, or read from
// $SLOSERVE_PROFILES_DIR when set), or by path (contains '/' or ends in .prof).
StatusOr<ProfileSuite> LoadSuite(const std::string& name_or_path);
// $SLOSERVE_PROFILES_DIR, the directory that replaces the embedded suites and traces;
// "" when unset (the embedded copies are used).
std::string ProfilesDir();
// Names of the suites compiled into the binary, sorted.
std::vector<std::string> EmbeddedSuiteNames();

}  // namespace sloserve
