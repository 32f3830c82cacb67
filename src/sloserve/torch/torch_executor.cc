// The only translation unit that includes LibTorch's headers (they cost seconds each).
#include "sloserve/torch/torch_executor.h"

#include <ATen/Parallel.h>
#include <malloc.h>
#include <torch/script.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "sloserve/core/mutex.h"

namespace sloserve {
namespace {

StatusOr<c10::ScalarType> TorchType(const std::string& datatype) {
  if (datatype == "FP32") return c10::ScalarType::Float;
  if (datatype == "FP64") return c10::ScalarType::Double;
  if (datatype == "FP16") return c10::ScalarType::Half;
  if (datatype == "BF16") return c10::ScalarType::BFloat16;
  if (datatype == "INT64") return c10::ScalarType::Long;
  if (datatype == "INT32") return c10::ScalarType::Int;
  if (datatype == "INT16") return c10::ScalarType::Short;
  if (datatype == "INT8") return c10::ScalarType::Char;
  if (datatype == "UINT8") return c10::ScalarType::Byte;
  if (datatype == "BOOL") return c10::ScalarType::Bool;
  return InvalidArgumentError("datatype " + datatype + " has no LibTorch equivalent");
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// A c10::Error's what() carries a C++ backtrace; the first line is the model's message.
std::string ModelMessage(const std::exception& e) {
  if (const auto* c10e = dynamic_cast<const c10::Error*>(&e)) return c10e->what_without_backtrace();
  return e.what();
}

int64_t ModuleBytes(const torch::jit::Module& m) {
  int64_t bytes = 0;
  for (const at::Tensor& p : m.parameters()) bytes += static_cast<int64_t>(p.nbytes());
  for (const at::Tensor& b : m.buffers()) bytes += static_cast<int64_t>(b.nbytes());
  return bytes;
}

// LibTorch's inter-op pool is process-wide and can be sized once, before first use.
void SetInteropThreadsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception&) {
      // Already sized (or used) by the host process: keep its setting.
    }
  });
}

// glibc gives a freed top of a heap back to the OS beyond 128 KB and serves blocks beyond
// its (dynamic) mmap threshold with fresh mappings, so LibTorch's per-call buffers (MBs for
// the CNNs at larger batches) were faulted in again on every forward call: cnn_large at
// batch 32 took 98 ms instead of 25 ms (docs/torch.md, "Performance"). Keeping freed
// memory in the process costs its peak footprint, which a server holds anyway.
void KeepFreedMemoryOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  });
}

struct Job {
  WorkerAction action;
  std::vector<Query> queries;  // RunBatch: a copy (the action's span dies with Send)
  // Preload: the result goes here instead of the sink (the engine sent no action).
  std::promise<ActionResult>* done = nullptr;
};

}  // namespace

struct TorchExecutor::Impl {
  struct Resident {
    std::shared_ptr<torch::jit::Module> module;
    int64_t bytes = 0;
  };

  // One worker: a thread and its queue. `resident` is the thread's own; its byte total
  // is mirrored in `resident_bytes` for readers on other threads.
  struct Worker {
    int cores = 1;
    HardwareId hardware = kNoId;
    Mutex mu;
    CondVar cv;
    std::deque<Job> jobs GUARDED_BY(mu);
    bool stop GUARDED_BY(mu) = false;
    std::unordered_map<VariantId, Resident> resident;  // worker thread only
    std::atomic<int64_t> resident_bytes{0};
    std::thread thread;
  };

  Impl(const ModelRepository* r, const ProfileSuite* s, PayloadStore* p, TorchExecutorOptions o)
      : repo(r), suite(s), payloads(p), options(std::move(o)) {
    if (options.machine_cores <= 0)
      options.machine_cores = static_cast<int>(std::thread::hardware_concurrency());
    if (!options.warn)
      options.warn = [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); };
    if (!options.clock) {
      own_clock = std::make_unique<SteadyClock>();
      options.clock = own_clock.get();
    }
    by_variant.resize(suite->variants().size(), nullptr);
    for (size_t v = 0; v < suite->variants().size(); ++v)
      by_variant[v] = repo->FindVariant(suite->variants()[v].name);
    SetInteropThreadsOnce();
  }

  TimePoint Now() const { return options.clock->Now(); }

  Worker* WorkerFor(WorkerId id, HardwareId hw) EXCLUDES(workers_mu) {
    MutexLock lock(workers_mu);
    auto it = workers.find(id);
    if (it != workers.end()) return it->second.get();
    auto w = std::make_unique<Worker>();
    w->cores = hw < suite->hardware().size() ? std::max(1, suite->hardware()[hw].cores) : 1;
    w->hardware = hw;
    cores_in_use += w->cores;
    if (cores_in_use > options.machine_cores && !warned) {
      warned = true;
      options.warn("sloserve: warning: the torch workers use " + std::to_string(cores_in_use) +
                   " cores but the machine has " + std::to_string(options.machine_cores) +
                   ": they oversubscribe it and their latencies will not match the profile");
    }
    Worker* raw = w.get();
    raw->thread = std::thread([this, raw] { Loop(raw); });
    workers.emplace(id, std::move(w));
    return raw;
  }

  void Loop(Worker* w) EXCLUDES(w->mu) {
    // First let LibTorch initialise this thread's pool size from its global, then set this
    // worker's own (the OpenMP team size is per calling thread).
    at::internal::lazy_init_num_threads();
    at::set_num_threads(w->cores);
    while (true) {
      Job job;
      {
        MutexLock lock(w->mu);
        w->cv.Wait(w->mu, [&]() REQUIRES(w->mu) { return w->stop || !w->jobs.empty(); });
        if (w->jobs.empty()) break;
        job = std::move(w->jobs.front());
        w->jobs.pop_front();
      }
      ActionResult r = std::visit([&](const auto& a) { return Handle(w, a, job); }, job.action);
      if (job.done) {
        job.done->set_value(std::move(r));
      } else {
        sink->Post(std::move(r));
      }
    }
    w->resident.clear();
    w->resident_bytes = 0;
  }

  ActionResult Begin(const auto& a) {
    ActionResult r;
    r.id = a.id;
    r.worker = a.worker;
    r.begin = Now();
    return r;
  }

  ActionResult Handle(Worker* w, const LoadVariant& a, const Job&) {
    ActionResult r = Begin(a);
    r.status = Load(w, a.variant);
    r.end = Now();
    return r;
  }

  ActionResult Handle(Worker* w, const UnloadVariant& a, const Job&) {
    ActionResult r = Begin(a);
    auto it = w->resident.find(a.variant);
    if (it != w->resident.end()) {
      w->resident_bytes -= it->second.bytes;
      w->resident.erase(it);
    }
    r.end = Now();
    return r;
  }

  ActionResult Handle(Worker* w, const RunBatch& a, const Job& job) {
    // At the first batch, not at construction: the HTTP server, started after the
    // executor is made, sets a low threshold of its own (server/heap_release.h).
    KeepFreedMemoryOnce();
    ActionResult r = Begin(a);
    if (r.begin > a.latest_start) {
      r.status = Status(StatusCode::kDeadlineExceeded, "batch could not start by its latest start");
    } else {
      StatusOr<std::vector<PayloadHandle>> outputs = Run(w, a.variant, job.queries);
      if (outputs.ok()) {
        r.outputs = std::move(*outputs);
      } else {
        r.status = outputs.status();
      }
    }
    r.end = Now();
    return r;
  }

  const RepoVariant* Config(VariantId v) const {
    return v < by_variant.size() ? by_variant[v] : nullptr;
  }

  std::string VariantName(VariantId v) const {
    return v < suite->variants().size() ? suite->variants()[v].name : std::to_string(v);
  }

  Status Load(Worker* w, VariantId v) {
    if (w->resident.count(v)) return OkStatus();
    const RepoVariant* cfg = Config(v);
    if (!cfg) {
      return NotFoundError("variant " + VariantName(v) + " is not in the model repository " +
                           repo->root);
    }
    auto module = std::make_shared<torch::jit::Module>();
    try {
      *module = torch::jit::load(cfg->model_path);
    } catch (const std::exception& e) {
      std::string msg = ModelMessage(e);
      if (size_t nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      return InvalidArgumentError("loading " + cfg->model_path +
                                  ": not a loadable TorchScript file (" + msg + ")");
    }
    module->eval();
    // Counted before freezing: a frozen module's weights are graph constants, not parameters.
    const int64_t bytes = ModuleBytes(*module);
    if (options.optimize_for_inference) OptimizeForInference(*cfg, module.get());
    ASSIGN_OR_RETURN(c10::ScalarType type, TorchType(cfg->input.datatype));
    std::vector<int64_t> shape = cfg->input.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    try {
      c10::InferenceMode guard;
      at::Tensor zeros = torch::zeros(shape, torch::TensorOptions().dtype(type));
      for (int i = 0; i < options.warmup_runs; ++i) module->forward({zeros});
      // TorchScript specialises a graph per input shape at its first calls, which run
      // several times slower (cnn_large at 2 rows: 5.9 ms, then 0.6 ms): each other profiled
      // batch size is run twice too, so no query pays that (docs/torch.md).
      if (!cfg->input.shape.empty() && cfg->input.shape[0] < 0 && options.warmup_runs > 0 &&
          w->hardware < suite->hardware().size()) {
        for (int b : suite->BatchSizes(w->hardware, v)) {
          if (b <= 1) continue;
          std::vector<int64_t> batch_shape = shape;
          batch_shape[0] = b;
          at::Tensor rows = torch::zeros(batch_shape, torch::TensorOptions().dtype(type));
          for (int i = 0; i < std::min(options.warmup_runs, 2); ++i) module->forward({rows});
        }
      }
    } catch (const std::exception& e) {
      return InvalidArgumentError("warm-up of " + cfg->model_path + " on a zero input of shape " +
                                  ShapeText(shape) + " failed: " + ModelMessage(e));
    }
    Resident res;
    res.module = std::move(module);
    res.bytes = bytes;
    w->resident_bytes += res.bytes;
    w->resident.emplace(v, std::move(res));
    return OkStatus();
  }

  // Freezes the module and rewrites its graph for inference (torch.jit.optimize_for_inference):
  // convolutions become oneDNN convolutions on prepacked weights at every batch size. Without
  // it a one-row batch of a small convolution takes ATen's im2col + BLAS path (ATen picks
  // oneDNN only from 2 rows or large inputs), and Debian's LibTorch calls the system BLAS,
  // netlib's reference one unless OpenBLAS is installed: cnn_large took 6.2 ms at batch 1
  // against 1.2 ms at batch 2 (docs/torch.md, "Batch 1"). A module that cannot be frozen
  // (it sets attributes in forward, say) runs as loaded, with a warning.
  void OptimizeForInference(const RepoVariant& cfg, torch::jit::Module* module) {
    try {
      *module = torch::jit::optimize_for_inference(*module);
    } catch (const std::exception& e) {
      std::string msg = ModelMessage(e);
      if (size_t nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      options.warn("sloserve: warning: " + cfg.model_path +
                   " cannot be optimised for inference, it runs as loaded (" + msg + ")");
    }
  }

  // The input tensor of one query, checked against the variant's declared one. `set`
  // keeps its bytes alive.
  StatusOr<const Tensor*> InputOf(const Query& q, const RepoVariant& cfg,
                                  std::shared_ptr<const TensorSet>* set) {
    *set = payloads->Get(q.payload);
    if (!*set)
      return InvalidArgumentError("query " + std::to_string(q.id) + " has no input tensor");
    const Tensor* t = nullptr;
    for (const Tensor& x : **set) {
      if (x.name == cfg.input.name) t = &x;
    }
    if (!t) return InvalidArgumentError("query has no input named " + cfg.input.name);
    const std::vector<int64_t>& want = cfg.input.shape;
    bool shape_ok = t->datatype == cfg.input.datatype && t->shape.size() == want.size() &&
                    !t->shape.empty() && t->shape[0] == q.size;
    for (size_t i = 1; shape_ok && i < want.size(); ++i)
      shape_ok = want[i] < 0 || t->shape[i] == want[i];
    if (!shape_ok) {
      return InvalidArgumentError("input " + cfg.input.name + ": got " + t->datatype + " " +
                                  ShapeText(t->shape) + ", variant " + cfg.name + " expects " +
                                  cfg.input.datatype + " " + ShapeText(want));
    }
    int64_t elements = 1;
    for (int64_t d : t->shape) elements *= d;
    if (static_cast<size_t>(elements) * DatatypeSize(t->datatype) != t->data.size()) {
      return InvalidArgumentError("input " + cfg.input.name + ": " +
                                  std::to_string(t->data.size()) + " bytes for shape " +
                                  ShapeText(t->shape));
    }
    return t;
  }

  // The queries' inputs stacked along the batch dimension into one tensor: each query's
  // bytes copied once (cheaper than a view per query and torch::cat, bench/torch_bench.cc).
  StatusOr<at::Tensor> StackInputs(const RepoVariant& cfg, const std::vector<Query>& queries,
                                   c10::ScalarType type) {
    std::vector<int64_t> shape;
    int64_t rows = 0;
    for (const Query& q : queries) rows += q.size;
    if (queries.empty()) return InvalidArgumentError("a batch without queries");
    at::Tensor batch;
    uint8_t* dst = nullptr;
    for (const Query& q : queries) {
      std::shared_ptr<const TensorSet> set;
      ASSIGN_OR_RETURN(const Tensor* t, InputOf(q, cfg, &set));
      if (!batch.defined()) {
        shape = t->shape;
        shape[0] = rows;
        try {
          batch = torch::empty(shape, torch::TensorOptions().dtype(type));
        } catch (const std::exception& e) {
          return InternalError("variant " + cfg.name + ": " + ModelMessage(e));
        }
        dst = static_cast<uint8_t*>(batch.data_ptr());
      } else if (!std::equal(t->shape.begin() + 1, t->shape.end(), shape.begin() + 1)) {
        return InvalidArgumentError("input " + cfg.input.name + ": query " + std::to_string(q.id) +
                                    " has shape " + ShapeText(t->shape) +
                                    ", another query of its batch " + ShapeText(shape) +
                                    " (only the first dimension may differ)");
      }
      std::memcpy(dst, t->data.data(), t->data.size());
      dst += t->data.size();
    }
    return batch;
  }

  StatusOr<std::vector<PayloadHandle>> Run(Worker* w, VariantId v,
                                           const std::vector<Query>& queries) {
    auto it = w->resident.find(v);
    if (it == w->resident.end()) {
      return FailedPreconditionError("variant " + VariantName(v) + " is not loaded on this worker");
    }
    const RepoVariant& cfg = *Config(v);
    ASSIGN_OR_RETURN(c10::ScalarType in_type, TorchType(cfg.input.datatype));
    ASSIGN_OR_RETURN(c10::ScalarType out_type, TorchType(cfg.output.datatype));
    int64_t rows = 0;
    for (const Query& q : queries) rows += q.size;
    ASSIGN_OR_RETURN(at::Tensor batch, StackInputs(cfg, queries, in_type));
    at::Tensor out;
    try {
      c10::InferenceMode guard;
      c10::IValue y = it->second.module->forward({batch});
      if (!y.isTensor()) {
        return InternalError("variant " + cfg.name + " returned " + y.tagKind() + ", not a tensor");
      }
      out = y.toTensor().to(out_type).contiguous();
    } catch (const std::exception& e) {
      return InternalError("variant " + cfg.name + ": " + ModelMessage(e));
    }
    if (out.dim() < 1 || out.size(0) != rows) {
      return InternalError("variant " + cfg.name + " returned shape " +
                           ShapeText(out.sizes().vec()) + " for " + std::to_string(rows) +
                           " input rows");
    }
    std::vector<PayloadHandle> handles;
    int64_t row = 0;
    const size_t row_bytes = out.numel() == 0 ? 0 : out.nbytes() / static_cast<size_t>(rows);
    for (const Query& q : queries) {
      Tensor t;
      t.name = cfg.output.name;
      t.datatype = cfg.output.datatype;
      t.shape = out.sizes().vec();
      t.shape[0] = q.size;
      const auto* base = static_cast<const uint8_t*>(out.data_ptr()) + row * row_bytes;
      t.data.assign(base, base + q.size * row_bytes);
      row += q.size;
      StatusOr<PayloadHandle> h = payloads->Put({std::move(t)});
      if (!h.ok()) {
        for (PayloadHandle done : handles) payloads->Release(done);
        return h.status();
      }
      handles.push_back(*h);
    }
    return handles;
  }

  const ModelRepository* repo;
  const ProfileSuite* suite;
  PayloadStore* payloads;
  TorchExecutorOptions options;
  std::unique_ptr<SteadyClock> own_clock;
  std::vector<const RepoVariant*> by_variant;  // by suite VariantId; nullptr = not in repo
  ResultSink* sink = nullptr;

  mutable Mutex workers_mu;
  std::unordered_map<WorkerId, std::unique_ptr<Worker>> workers GUARDED_BY(workers_mu);
  int cores_in_use GUARDED_BY(workers_mu) = 0;
  bool warned GUARDED_BY(workers_mu) = false;
};

TorchExecutor::TorchExecutor(const ModelRepository* repo, const ProfileSuite* suite,
                             PayloadStore* payloads, TorchExecutorOptions options)
    : impl_(std::make_unique<Impl>(repo, suite, payloads, std::move(options))) {}

TorchExecutor::~TorchExecutor() {
  std::vector<Impl::Worker*> workers;
  {
    MutexLock lock(impl_->workers_mu);
    for (auto& [id, w] : impl_->workers) workers.push_back(w.get());
  }
  for (Impl::Worker* w : workers) {
    {
      MutexLock lock(w->mu);
      w->stop = true;
    }
    w->cv.NotifyAll();
  }
  for (Impl::Worker* w : workers) w->thread.join();
}

Duration TorchExecutor::Send(const WorkerAction& action) {
  impl_->sink = sink_;
  Job job;
  job.action = action;
  WorkerId worker = 0;
  HardwareId hw = 0;
  std::visit(
      [&](const auto& a) {
        worker = a.worker;
        hw = a.hardware;
      },
      action);
  if (const auto* run = std::get_if<RunBatch>(&action)) {
    job.queries.assign(run->queries.begin(), run->queries.end());
    std::get<RunBatch>(job.action).queries = {};
  }
  Impl::Worker* w = impl_->WorkerFor(worker, hw);
  {
    MutexLock lock(w->mu);
    w->jobs.push_back(std::move(job));
  }
  w->cv.NotifyOne();
  return Duration(0);
}

void TorchExecutor::UseClock(const Clock* clock) {
  if (clock) impl_->options.clock = clock;
}

StatusOr<Duration> TorchExecutor::Preload(WorkerId worker, HardwareId hardware, VariantId variant) {
  LoadVariant load;
  load.worker = worker;
  load.hardware = hardware;
  load.variant = variant;
  std::promise<ActionResult> done;
  std::future<ActionResult> result = done.get_future();
  Job job;
  job.action = load;
  job.done = &done;
  Impl::Worker* w = impl_->WorkerFor(worker, hardware);
  {
    MutexLock lock(w->mu);
    w->jobs.push_back(std::move(job));
  }
  w->cv.NotifyOne();
  ActionResult r = result.get();
  if (!r.status.ok()) return r.status;
  return r.end - r.begin;
}

int64_t TorchExecutor::ResidentBytes(WorkerId worker) const {
  MutexLock lock(impl_->workers_mu);
  auto it = impl_->workers.find(worker);
  return it == impl_->workers.end() ? 0 : it->second->resident_bytes.load();
}

int TorchExecutor::CoresInUse() const {
  MutexLock lock(impl_->workers_mu);
  return impl_->cores_in_use;
}

Status CheckCoreBudget(int total_cores, int machine_cores, bool allow,
                       const std::function<void(const std::string&)>& warn) {
  if (machine_cores <= 0) machine_cores = static_cast<int>(std::thread::hardware_concurrency());
  if (total_cores <= machine_cores) return OkStatus();
  const std::string what = "the workers' cores add up to " + std::to_string(total_cores) +
                           " but this machine has " + std::to_string(machine_cores);
  if (!allow) {
    return InvalidArgumentError(what +
                                " (fewer workers or cores, or executor.oversubscribe: true)");
  }
  if (warn) warn("sloserve: warning: " + what + "; they oversubscribe it (executor.oversubscribe)");
  return OkStatus();
}

}  // namespace sloserve
