#include "sloserve/torch/profile_measure.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <tuple>

#include "sloserve/loadgen/labelled_dataset.h"
#include "sloserve/profile/model_file_hash.h"
#include "sloserve/torch/blocking_executor_client.h"
#include "sloserve/torch/torch_executor.h"

namespace sloserve {
namespace {

// Drives one executor action at a time, synchronously.
class Bench {
 public:
  Bench(const ModelRepository* repo, const ProfileSuite* suite)
      : store_(size_t{1} << 30), exec_(repo, suite, &store_), client_(&exec_, &store_) {}

  StatusOr<Duration> Load(WorkerId w, HardwareId hw, VariantId v) {
    ActionResult r = client_.Load(w, hw, v);
    if (!r.status.ok()) return r.status;
    return r.end - r.begin;
  }

  Status Unload(WorkerId w, HardwareId hw, VariantId v) { return client_.Unload(w, hw, v).status; }

  // One batch of `rows` one-row queries; returns its duration and each query's output.
  StatusOr<Duration> Run(WorkerId w, HardwareId hw, VariantId v, const RepoTensorSpec& input,
                         const std::vector<std::vector<float>>& rows,
                         std::vector<std::vector<float>>* outputs) {
    std::vector<TensorSet> inputs;
    for (const std::vector<float>& row : rows) {
      Tensor t;
      t.name = input.name;
      t.datatype = "FP32";
      t.shape = input.shape;
      t.shape[0] = 1;
      t.data.resize(row.size() * sizeof(float));
      std::memcpy(t.data.data(), row.data(), t.data.size());
      inputs.push_back({std::move(t)});
    }
    ActionResult r = client_.Run(w, hw, v, std::move(inputs));
    if (outputs) outputs->clear();
    for (PayloadHandle h : r.outputs) {
      TensorSet set = client_.TakeOutput(h);
      if (!outputs) continue;
      std::vector<float> y;
      if (!set.empty()) {
        y.resize(set[0].data.size() / sizeof(float));
        std::memcpy(y.data(), set[0].data.data(), y.size() * sizeof(float));
      }
      outputs->push_back(std::move(y));
    }
    if (!r.status.ok()) return r.status;
    return r.end - r.begin;
  }

  int64_t ResidentBytes(WorkerId w) const { return exec_.ResidentBytes(w); }

 private:
  PayloadStore store_;
  TorchExecutor exec_;
  BlockingExecutorClient client_;
};

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

StatusOr<ProfileSuite> MeasureRepositoryProfile(const ModelRepository& repo,
                                                const MeasureOptions& o) {
  if (o.batch_sizes.empty() || o.cores.empty() || o.samples < 1 || o.warmup < 0 || o.loads < 1)
    return InvalidArgumentError("profile measure: empty batch sizes or cores, or samples < 1");
  if (o.gap < Duration(0)) return InvalidArgumentError("profile measure: a negative gap");
  // `probe` names the variants and hardware for the executor while measuring; `suite` is
  // built after, in the same order (same ids), with the measured figures.
  ProfileSuite probe;
  ProfileSuite suite;
  suite.set_name("measured");
  std::string accuracy_source;
  std::vector<HardwareId> hw;
  for (int c : o.cores) {
    const HardwareSpec spec{"local-" + std::to_string(c) + "c", 0, c, 0};
    hw.push_back(probe.AddHardware(spec));
    suite.AddHardware(spec);
  }
  struct Planned {
    VariantId id;
    const RepoVariant* cfg;
  };
  std::vector<Planned> planned;
  for (const RepoTask& t : repo.tasks) {
    TaskSpec task;
    task.name = t.name;
    task.default_slo = o.slo;
    task.input_name = t.variants[0].input.name;
    task.input_datatype = t.variants[0].input.datatype;
    task.input_shape = t.variants[0].input.shape;
    task.output_name = t.variants[0].output.name;
    task.output_datatype = t.variants[0].output.datatype;
    task.output_shape = t.variants[0].output.shape;
    const TaskId tid = probe.AddTask(task);
    suite.AddTask(task);
    for (const RepoVariant& v : t.variants) {
      if (!o.variants.empty() &&
          std::find(o.variants.begin(), o.variants.end(), v.name) == o.variants.end())
        continue;
      planned.push_back({probe.AddVariant(VariantSpec{v.name, tid, v.accuracy, 0, {}}), &v});
    }
  }
  if (planned.empty()) return InvalidArgumentError("profile measure: no variant to measure");

  Bench bench(&repo, &probe);
  struct Measured {
    VariantSpec spec;
    std::vector<std::tuple<HardwareId, int, std::vector<int64_t>>> latency;
    uint64_t model_hash = 0;
  };
  std::vector<Measured> measured;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> pixel(0, 16);
  std::mt19937 gap_rng(2);
  std::exponential_distribution<double> gap_draw(
      o.gap > Duration(0) ? 1.0 / static_cast<double>(o.gap.count()) : 1.0);
  for (const Planned& p : planned) {
    const RepoVariant& cfg = *p.cfg;
    for (int d : cfg.input.shape) {
      if (d == 0) return InvalidArgumentError("profile measure: zero dimension");
    }
    int64_t row_elements = 1;
    for (size_t i = 1; i < cfg.input.shape.size(); ++i) {
      if (cfg.input.shape[i] < 0)
        return InvalidArgumentError("profile measure: " + cfg.name +
                                    " has a variable non-batch dimension");
      row_elements *= cfg.input.shape[i];
    }
    Measured m;
    // Hashed before measuring: a file replaced meanwhile makes the profile stale, not wrong.
    ASSIGN_OR_RETURN(m.model_hash, HashModelFile(cfg.model_path));
    bool accuracy_measured = true;
    VariantSpec& spec = m.spec;
    spec = probe.variants()[p.id];
    for (size_t h = 0; h < hw.size(); ++h) {
      const WorkerId w = static_cast<WorkerId>(h);
      // Cold starts: load and unload, `loads` times; the last load stays for the batches.
      std::vector<int64_t> loads;
      for (int i = 0; i < o.loads; ++i) {
        if (i > 0) RETURN_IF_ERROR(bench.Unload(w, hw[h], p.id));
        ASSIGN_OR_RETURN(Duration t, bench.Load(w, hw[h], p.id));
        loads.push_back(t.count());
      }
      if (h == 0) {
        spec.load_time = Micros(Median(loads));
        spec.memory_mb = static_cast<double>(bench.ResidentBytes(w)) / (1024.0 * 1024.0);
      }
      for (int rows : o.batch_sizes) {
        std::vector<std::vector<float>> inputs(static_cast<size_t>(rows));
        for (auto& r : inputs) {
          r.resize(static_cast<size_t>(row_elements));
          for (float& x : r) x = static_cast<float>(pixel(rng));
        }
        std::vector<int64_t> samples;
        for (int i = 0; i < o.warmup + o.samples; ++i) {
          if (o.gap > Duration(0)) {
            std::this_thread::sleep_for(
                o.gap_exponential ? Micros(static_cast<int64_t>(gap_draw(gap_rng))) : o.gap);
          }
          ASSIGN_OR_RETURN(Duration t, bench.Run(w, hw[h], p.id, cfg.input, inputs, nullptr));
          if (i >= o.warmup) samples.push_back(t.count());
        }
        m.latency.emplace_back(hw[h], rows, std::move(samples));
      }
      // Accuracy on the held-out set, on the first hardware type.
      if (h == 0) {
        StatusOr<LabelledDataset> held =
            LoadLabelledDataset(repo.FindTask(cfg.task)->dir + "/heldout.json");
        if (!held.ok() && held.status().code() != StatusCode::kNotFound) {
          return held.status();  // a heldout.json that is there but broken is not skipped
        }
        if (held.ok()) {
          int correct = 0;
          const size_t n = held->inputs.size();
          for (size_t i = 0; i < n; i += 32) {
            std::vector<std::vector<float>> chunk(
                held->inputs.begin() + static_cast<long>(i),
                held->inputs.begin() + static_cast<long>(std::min(n, i + 32)));
            std::vector<std::vector<float>> out;
            ASSIGN_OR_RETURN(Duration ignored, bench.Run(w, hw[h], p.id, cfg.input, chunk, &out));
            (void)ignored;
            for (size_t k = 0; k < out.size(); ++k) {
              const auto best = std::max_element(out[k].begin(), out[k].end()) - out[k].begin();
              correct += best == held->labels[i + k];
            }
          }
          spec.accuracy = 100.0 * correct / static_cast<double>(n);
          accuracy_source = "accuracy = top-1 measured on <task>/heldout.json through the executor";
        } else {
          accuracy_measured = false;
          if (accuracy_source.empty())
            accuracy_source = "accuracy = the variant config's figure (no heldout.json)";
          if (o.warning) {
            char figure[32];
            std::snprintf(figure, sizeof figure, "%.2f%%", cfg.accuracy);
            o.warning("accuracy of " + cfg.name + " NOT measured: " + repo.FindTask(cfg.task)->dir +
                      "/heldout.json does not exist; the profile takes " + figure + " from " +
                      cfg.dir + "/config.yaml (format of heldout.json: docs/torch.md)");
          }
        }
      }
      RETURN_IF_ERROR(bench.Unload(w, hw[h], p.id));
    }
    if (o.progress) {
      char line[256];
      const LatencyDistribution one(std::get<2>(m.latency.front()));
      std::snprintf(line, sizeof line,
                    "%s: accuracy %.2f%%%s, load %.1f ms, %.3f MB, p50 %.3f ms at batch %d",
                    cfg.name.c_str(), spec.accuracy,
                    accuracy_measured ? "" : " (from config.yaml, NOT measured)",
                    ToMillis(spec.load_time), spec.memory_mb, ToMillis(one.Quantile(0.5)),
                    o.batch_sizes.front());
      o.progress(line);
    }
    measured.push_back(std::move(m));
  }
  for (Measured& m : measured) {
    const VariantId v = suite.AddVariant(m.spec);
    suite.SetModelHash(v, m.model_hash);
    for (auto& [h, rows, samples] : m.latency)
      suite.AddLatency(h, v, rows, LatencyDistribution(std::move(samples)));
  }
  std::string gap_text;
  if (o.gap > Duration(0)) {
    char g[512];
    std::snprintf(g, sizeof g, ", each batch after %s%.3f ms idle (--gap-ms%s)",
                  o.gap_exponential ? "an exponentially distributed idle time of mean " : "",
                  ToMillis(o.gap), o.gap_exponential ? " --gap-exponential" : "");
    gap_text = g;
  }
  std::string batches;
  for (int b : o.batch_sizes) batches += (batches.empty() ? "" : ",") + std::to_string(b);
  suite.set_provenance(
      "measured by `sloserve profile measure` from model repository " + repo.root +
      " through the LibTorch executor; hardware local-<N>c = N cores of this machine (intra-op "
      "threads), price 0; latency = one batch of one-row queries of random pixels 0..16 per "
      "sample (stack, forward, split), " +
      std::to_string(o.samples) + " samples after " + std::to_string(o.warmup) +
      " dropped warm-up batches, batch sizes " + batches + gap_text + "; load_time = median of " +
      std::to_string(o.loads) +
      " cold starts (torch::jit::load, optimize_for_inference, warm-up); memory = parameters and "
      "buffers; model_hash = "
      "64-bit hash of each model file measured; " +
      accuracy_source);
  return suite;
}

}  // namespace sloserve
