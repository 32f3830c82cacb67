// `sloserve loadgen`: drive a KServe v2 server open-loop and report what it achieved.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "load_schedule.h"
#include "progress_bar.h"
#include "serve_setup.h"
#include "sloserve/core/declared_key.h"
#include "sloserve/core/mutex.h"
#include "sloserve/engine/admission.h"
#include "sloserve/loadgen/labelled_dataset.h"
#include "sloserve/loadgen/load_generator.h"
#include "sloserve/loadgen/model_metadata.h"
#include "sloserve/loadgen/multi_model_load.h"
#include "sloserve/server/access_control.h"

namespace sloserve::cli {
// Named, not anonymous: the unity build compiles the commands in one batch.
namespace loadgen_cmd {

// --connections and --max-connections: at most what a server takes (server.max_connections
// is at most 1,000,000), and within the process's open-file limit, one descriptor per
// connection (beyond it connects fail with EMFILE mid-run).
constexpr double kMaxConnections = 1'000'000;
constexpr int64_t kReservedFds = 64;  // stdio, epoll, timers, the files loadgen reads

// A given --connections/--max-connections (`flag`) that needs more descriptors than
// RLIMIT_NOFILE allows is refused, naming the limit and the most the flag may be.
Status CheckFileLimit(const std::string& flag, int64_t connections) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return OkStatus();
  const auto soft = static_cast<int64_t>(limit.rlim_cur);
  if (connections + kReservedFds <= soft) return OkStatus();
  return InvalidArgumentError("--" + flag + ": " + std::to_string(connections) +
                              " connections need more open files than this process's limit of " +
                              std::to_string(soft) + " (RLIMIT_NOFILE, `ulimit -n`; at most " +
                              std::to_string(std::max<int64_t>(0, soft - kReservedFds)) +
                              " connections fit): raise the limit or lower --" + flag);
}

const std::vector<FlagSpec> kFlags = {
    {"host", "ADDR", "server address (default 127.0.0.1)"},
    {"port", "N", "server port (default 8000)"},
    {"tls-ca", "FILE", "HTTPS: trust this CA's PEM (a server with server.tls_cert_file)"},
    {"tls-cert", "FILE", "HTTPS: present this client certificate (server.tls_client_ca_file)"},
    {"tls-key", "FILE", "HTTPS: the key of --tls-cert"},
    {"token-file", "FILE",
     "send Authorization: Bearer <the file's token> (server.require_token_for_infer)"},
    {"model", "TASK[,TASK...]",
     "model (task) to infer (default image); several, comma-separated, share the load "
     "equally"},
    {"models", "TASK:SHARE,...",
     "several models at once, each with its share of the load (e.g. a:0.7,b:0.3; shares are "
     "normalised): one report per model and the totals"},
    {"qps", "RATE", "target requests per second for synthetic arrivals (default 500)"},
    {"duration", "SECONDS", "length of a synthetic arrival process (default 10)"},
    {"arrival", "KIND", "poisson (default), gamma, constant, qps_interval_trace, rps_trace"},
    {"cv", "X", "gamma: coefficient of variation of inter-arrivals (default 1)"},
    {"trace", "FILE", "trace to replay (qps_interval_trace / rps_trace)"},
    {"window-start", "S", "trace: first trace second replayed"},
    {"window-end", "S", "trace: one past the last second replayed"},
    {"rate-scale", "X", "trace: multiply every rate"},
    {"time-compression", "X", "trace: replay X times faster with the same requests"},
    {"slo-ms", "MS", "send parameters.slo_ms (default: the server's task default)"},
    {"app", "NAME", "send parameters.app"},
    {"priority", "N", "send parameters.priority: 1 = highest (docs/admission.md); 0 = not sent"},
    {"rows", "N", "batch dimension of every request (default 1)"},
    {"sizes", "SPEC",
     "draw each request's rows as sim's workload.sizes: constant:N, deeprecsys, "
     "gaussian:MEAN:SD (seeded by --seed; not with --rows)"},
    {"input", "NAME", "input tensor name (default: the model metadata's first input)"},
    {"datatype", "TYPE", "input datatype (default: the model metadata's, else FP32)"},
    {"shape", "DIMS",
     "full input shape, e.g. 1,16 (default: the model metadata's with ROWS for the batch "
     "dimension and 1 for other -1s, else ROWS,16); with --sizes the first dimension is "
     "-1, each request's rows"},
    {"connections", "N", "keep-alive connections opened up front (default 64)"},
    {"max-connections", "N", "cap on open connections (default 512)"},
    {"timeout", "SECONDS", "per-request timeout (default 30)"},
    {"wait-ready", "SECONDS",
     "wait up to this long for the model to be ready before the clock starts (a server\n"
     "      still starting answers 503 with its progress; default 600, 0 = do not wait)"},
    {"seed", "N", "seed of the arrival process and of --sizes, as sim's seed (default 1)"},
    {"suite", "NAME", "profile suite to turn answering variants into accuracy"},
    {"dataset", "FILE",
     "send real labelled inputs (e.g. models/digits/heldout.json, cycled; one row each) and "
     "report the accuracy measured from the responses"},
    {"json", "", "print the report as JSON"},
    {"help", "", "show this help"},
};

void PrintHelp() {
  std::printf(
      "usage: sloserve loadgen [options]\n\n"
      "Sends POST /v2/models/{model}/infer requests open-loop: each at its scheduled time from\n"
      "the arrival process, whatever is outstanding; latency counts from the scheduled time\n"
      "(no coordinated omission). Reports achieved QPS, latency percentiles, SLO attainment\n"
      "and, with --suite, the accuracy of the answering variants (docs/loadgen.md). With the\n"
      "same --seed, --qps/--arrival and --sizes as a sim config's seed and workload, the\n"
      "requests arrive at the same offsets with the same rows as in `sloserve sim`. Several\n"
      "models at once (--models a:0.7,b:0.3): one run per model at its share of the load, a\n"
      "report per model and the totals.\n\n"
      "options:\n%s\nexample: sloserve loadgen --port 8000 --model image --qps 800 --duration 10 "
      "--suite ramsis-image --json\n",
      FlagsHelp(kFlags).c_str());
}

// Several models at once (multi_model_load.h): a report per model, then the totals.
Status RunSeveral(const Args& args, const std::vector<LoadOptions>& per_model,
                  const std::vector<double>& shares, const ProfileSuite* suite) {
  const bool bar_on = !args.Has("json") && StderrIsTerminal();
  ProgressBar bar("loadgen", bar_on);
  double scheduled = 0;
  for (const LoadOptions& m : per_model) scheduled += static_cast<double>(m.schedule.size());
  // Each model's thread reports its own progress; the bar shows their sum.
  Mutex mu;
  std::vector<int64_t> completed(per_model.size(), 0), ok(per_model.size(), 0);
  ASSIGN_OR_RETURN(MultiModelReport report,
                   RunMultiModelLoad(per_model, shares, [&](size_t i, const LoadProgress& p) {
                     MutexLock lock(mu);
                     completed[i] = p.completed;
                     ok[i] = p.ok;
                     int64_t c = 0, k = 0;
                     for (size_t j = 0; j < completed.size(); ++j) {
                       c += completed[j];
                       k += ok[j];
                     }
                     bar.Update(static_cast<double>(c) / std::max(scheduled, 1.0),
                                std::to_string(c) + " done, " + std::to_string(k) + " ok");
                   }));
  bar.Finish();
  for (const std::string& w : report.total.client_bottleneck.warnings) {
    std::fprintf(stderr, "sloserve loadgen: warning: %s\n", w.c_str());
  }
  if (args.Has("json")) {
    nlohmann::json j = report.ToJson();
    if (suite != nullptr) {
      for (size_t i = 0; i < report.models.size(); ++i) {
        const double a = MeanAccuracy(report.models[i].report, *suite);
        if (a >= 0) j["models"][i]["accuracy"] = a;
      }
      if (const double a = MeanAccuracy(report.total, *suite); a >= 0) j["total"]["accuracy"] = a;
    }
    std::cout << j.dump(2) << std::endl;
  } else {
    std::cout << report.ToText();
    if (suite != nullptr) {
      if (const double a = MeanAccuracy(report.total, *suite); a >= 0)
        std::printf("accuracy      %.3f%% (mean over answered requests, every model)\n", a);
    }
  }
  return OkStatus();
}

// The models to drive and their shares of the load: --models a:0.7,b:0.3, or --model a,b
// (equal shares), or --model a; shares normalised to sum to 1.
StatusOr<std::vector<std::pair<std::string, double>>> ParseModels(const Args& args) {
  if (args.Has("model") && args.Has("models"))
    return InvalidArgumentError("--model and --models: give one of them");
  const bool shared = args.Has("models");
  const std::string list = shared ? args.Get("models") : args.Get("model", "image");
  std::vector<std::pair<std::string, double>> models;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    pos = comma + 1;
    std::string name = item;
    double share = 1;
    if (shared) {
      const size_t colon = item.rfind(':');
      const std::optional<double> v =
          colon == std::string::npos ? std::nullopt : ParseNumber(item.substr(colon + 1));
      if (!v || !(*v > 0 && *v <= 1e6)) {
        return InvalidArgumentError("--models: '" + item +
                                    "': expected MODEL:SHARE with a share > 0 (e.g. a:0.7,b:0.3)");
      }
      name = item.substr(0, colon);
      share = *v;
    }
    if (name.empty()) return InvalidArgumentError("--model: an empty model name in '" + list + "'");
    if (std::any_of(models.begin(), models.end(), [&](const auto& m) { return m.first == name; }))
      return InvalidArgumentError("--model: '" + name + "' is given twice");
    models.emplace_back(name, share);
    if (models.size() > kMaxLoadModels) {
      return InvalidArgumentError("--model: at most " + std::to_string(kMaxLoadModels) +
                                  " models at once");
    }
  }
  double sum = 0;
  for (const auto& m : models) sum += m.second;
  for (auto& m : models) m.second /= sum;
  return models;
}

// One model's options: its schedule (the arrival process at its share of the rate, its
// own seed), its rows, and the input spec and default SLO from its metadata.
StatusOr<LoadOptions> PrepareModel(const Args& args, LoadOptions o, const std::string& model,
                                   double share, uint64_t seed, bool several) {
  o.task = model;
  const bool sized = args.Has("sizes");
  ArrivalSpec a;
  a.kind = args.Get("arrival", "poisson");
  ASSIGN_OR_RETURN(a.rate_qps, args.GetDouble("qps", 500));
  ASSIGN_OR_RETURN(a.cv, args.GetDouble("cv", 1));
  a.trace_path = args.Get("trace", "");
  ASSIGN_OR_RETURN(a.window_start_s, args.GetInt("window-start", 0));
  ASSIGN_OR_RETURN(a.window_end_s, args.GetInt("window-end", -1));
  ASSIGN_OR_RETURN(a.rate_scale, args.GetDouble("rate-scale", 1));
  ASSIGN_OR_RETURN(a.time_compression, args.GetDouble("time-compression", 1));
  // Bounded before the conversion to microseconds (1e300 s overflowed it).
  ASSIGN_OR_RETURN(double duration,
                   args.GetDoubleIn("duration", a.kind.find("trace") != std::string::npos ? 0 : 10,
                                    {0, kMaxRunSeconds, false, "seconds"}));
  a.horizon = SecondsF(duration);
  // The model's share of the load: synthetic rates and trace rates alike.
  a.rate_qps *= share;
  a.rate_scale *= share;
  ASSIGN_OR_RETURN(o.schedule, BuildSchedule(a, seed));
  if (sized) {
    o.sizes_label = args.Get("sizes");
    auto sizes = DrawQuerySizes(o.sizes_label, o.schedule, seed);
    if (!sizes.ok()) return sizes.status().WithPrefix("--sizes");
    o.request_rows = std::move(sizes).value();
  }
  if (several) {
    // The connections, shared by the models in proportion to their load.
    o.connections = std::max(1, static_cast<int>(std::lround(o.connections * share)));
    o.max_connections =
        std::max(o.connections, static_cast<int>(std::lround(o.max_connections * share)));
  }
  ASSIGN_OR_RETURN(double wait_ready,
                   args.GetDoubleIn("wait-ready", 600, {0, kMaxTimeoutSeconds, false, "seconds"}));
  if (wait_ready > 0) {
    Status ready = WaitUntilModelReady(
        o.host, o.port, o.task, SecondsF(wait_ready),
        [&](const std::string& reason) {
          std::fprintf(stderr, "sloserve loadgen: waiting for the server%s: %s\n",
                       several ? (" (model " + model + ")").c_str() : "", reason.c_str());
        },
        o.tls);
    // An unknown model is judged below (refused, unless --input/--datatype say to send
    // anyway and count the server's errors).
    if (!ready.ok() && ready.code() != StatusCode::kNotFound) return ready;
  }
  // The input tensor the server declares, unless given, and the SLO it applies when
  // --slo-ms is not sent (for the client-bottleneck check): KServe v2 model metadata.
  const bool need_input = !args.Has("input") || !args.Has("datatype");
  const bool want_shape = !args.Has("shape") && !args.Has("dataset");
  if (need_input || want_shape || o.slo_ms <= 0) {
    StatusOr<ModelInput> input = FetchModelInput(o.host, o.port, o.task, Seconds(5), o.tls);
    if (input.ok()) {
      if (!args.Has("input")) o.input_name = input->name;
      if (!args.Has("datatype")) o.datatype = input->datatype;
      // The declared shape, unless given: the batch dimension is each request's rows.
      if (want_shape && !input->shape.empty()) {
        o.shape = input->shape;
        o.shape[0] = sized ? -1 : o.rows;
        for (size_t i = 1; i < o.shape.size(); ++i) o.shape[i] = std::max<int64_t>(o.shape[i], 1);
      }
      o.default_slo_ms = input->default_slo_ms;
    } else if (!need_input) {
      // Only the default SLO or shape was wanted: without the SLO the send lag is not
      // judged, without the shape ROWS,16 is sent.
    } else if (input.status().code() != StatusCode::kInvalidArgument) {
      return input.status();  // unreachable server or unknown model: nothing to load
    } else {
      std::fprintf(stderr, "sloserve loadgen: warning: %s; sending input '%s' (%s)\n",
                   input.status().message().c_str(), o.input_name.c_str(), o.datatype.c_str());
    }
  }
  return o;
}

Status Run(const Args& args) {
  LoadOptions o;
  o.host = args.Get("host", "127.0.0.1");
  ASSIGN_OR_RETURN(int64_t port, args.GetInt("port", 8000));
  if (port < 1 || port > 65535) return InvalidArgumentError("--port: must be 1..65535");
  o.port = static_cast<uint16_t>(port);
  ASSIGN_OR_RETURN(const auto models, ParseModels(args));
  const bool several = models.size() > 1;
  o.tls = {args.Get("tls-ca", ""), args.Get("tls-cert", ""), args.Get("tls-key", "")};
  if (o.tls.cert_file.empty() != o.tls.key_file.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key: give both or neither");
  }
  if (args.Has("token-file")) {
    ASSIGN_OR_RETURN(o.token, ReadTokenFile(args.Get("token-file"), "--token-file"));
  }
  o.app = args.Get("app", "");
  ASSIGN_OR_RETURN(int64_t priority, args.GetInt("priority", 0));
  if (priority < 0 || priority > kMaxPriorityLevels)
    return InvalidArgumentError("--priority: must be 0.." + std::to_string(kMaxPriorityLevels) +
                                ", got " + std::to_string(priority));
  o.priority = static_cast<int32_t>(priority);
  // Not given: 0, not sent (the server's default); a given SLO <= 0 was silently dropped.
  ASSIGN_OR_RETURN(o.slo_ms, args.GetDoubleIn("slo-ms", 0, {0, kMaxSloMillis, true, "ms"}));
  const bool sized = args.Has("sizes");
  if (sized && args.Has("rows")) {
    return InvalidArgumentError(
        "--rows and --sizes cannot be combined: --rows N sends N rows in every request, "
        "--sizes SPEC draws each request's rows (use --sizes constant:N for a fixed size)");
  }
  ASSIGN_OR_RETURN(int64_t rows, args.GetInt("rows", 1));
  if (rows < 1) return InvalidArgumentError("--rows: must be >= 1");
  o.rows = static_cast<int32_t>(rows);
  o.input_name = args.Get("input", "input");
  o.datatype = args.Get("datatype", "FP32");
  if (args.Has("shape")) {
    ASSIGN_OR_RETURN(o.shape, ParseShapeList(args.Get("shape")));
    if (sized && o.shape[0] != -1) {
      return InvalidArgumentError(
          "--shape: with --sizes the first dimension is each request's "
          "rows: write -1 (e.g. -1,16)");
    }
  } else {
    o.shape = {sized ? -1 : o.rows, 16};
  }
  if (args.Has("dataset")) {
    if (sized || args.Has("rows") || args.Has("shape")) {
      return InvalidArgumentError(
          "--dataset: sends each sample as one row of its own shape; drop --rows, --sizes and "
          "--shape");
    }
    if (several) return InvalidArgumentError("--dataset: with one model only");
    ASSIGN_OR_RETURN(LabelledDataset data, LoadLabelledDataset(args.Get("dataset")));
    o.shape = {1};
    o.shape.insert(o.shape.end(), data.shape.begin(), data.shape.end());
    if (!args.Has("input")) o.input_name = data.input_name;
    o.dataset_inputs = std::move(data.inputs);
    o.dataset_labels = std::move(data.labels);
  }
  ASSIGN_OR_RETURN(int64_t conns, args.GetIntIn("connections", 64, {1, kMaxConnections}));
  ASSIGN_OR_RETURN(int64_t max_conns, args.GetIntIn("max-connections", 512, {1, kMaxConnections}));
  if (max_conns < conns) {
    return InvalidArgumentError("--connections: must be at most --max-connections (" +
                                std::to_string(max_conns) + "), got " + std::to_string(conns));
  }
  if (args.Has("max-connections")) {
    RETURN_IF_ERROR(CheckFileLimit("max-connections", max_conns));
  } else if (args.Has("connections")) {
    RETURN_IF_ERROR(CheckFileLimit("connections", conns));
  }
  o.connections = static_cast<int>(conns);
  o.max_connections = static_cast<int>(max_conns);
  ASSIGN_OR_RETURN(double timeout,
                   args.GetDoubleIn("timeout", 30, {0, kMaxTimeoutSeconds, true, "seconds"}));
  o.timeout = SecondsF(timeout);
  ASSIGN_OR_RETURN(int64_t seed, args.GetIntIn("seed", 1, kSeedRange));

  std::unique_ptr<ProfileSuite> suite;
  if (args.Has("suite")) {
    ASSIGN_OR_RETURN(ProfileSuite s, LoadSuite(args.Get("suite")));
    suite = std::make_unique<ProfileSuite>(std::move(s));
  }
  std::vector<LoadOptions> per_model;
  std::vector<double> shares;
  for (size_t i = 0; i < models.size(); ++i) {
    // Model i's arrivals from seed + i: the first model's are those of a one-model run.
    ASSIGN_OR_RETURN(LoadOptions m, PrepareModel(args, o, models[i].first, models[i].second,
                                                 static_cast<uint64_t>(seed) + i, several));
    per_model.push_back(std::move(m));
    shares.push_back(models[i].second);
  }
  if (several) return RunSeveral(args, per_model, shares, suite.get());
  o = std::move(per_model.front());
  const bool bar_on = !args.Has("json") && StderrIsTerminal();
  ProgressBar bar("loadgen", bar_on);
  const double total = static_cast<double>(o.schedule.size());
  // Client-bottleneck warnings while the run goes on (once each); the final verdict, on
  // the whole run, is in the report and repeated on stderr below.
  const double lag_slo_ms = o.slo_ms > 0 ? o.slo_ms : o.default_slo_ms;
  bool warned_lag = false;
  bool warned_cap = false;
  ASSIGN_OR_RETURN(LoadReport report, RunLoad(o, [&](const LoadProgress& p) {
                     if (!warned_cap && p.waited_for_connection > 0) {
                       warned_cap = true;
                       std::fprintf(stderr,
                                    "%ssloserve loadgen: warning: connection cap reached at "
                                    "%.1f s (%d connections busy); requests wait inside "
                                    "loadgen (raise --max-connections)\n",
                                    bar_on ? "\n" : "", ToSeconds(p.elapsed), o.max_connections);
                     }
                     // The final verdict's rule on the run so far (a single late send does not
                     // count).
                     const double lag_ms = ToMillis(p.send_lag_p99);
                     if (!warned_lag && SendLagExceeded(lag_ms, lag_slo_ms)) {
                       warned_lag = true;
                       std::fprintf(stderr,
                                    "%ssloserve loadgen: warning: p99 send lag %.2f ms at %.1f s "
                                    "exceeds %.0f%% of the %.1f ms SLO; loadgen is the "
                                    "bottleneck\n",
                                    bar_on ? "\n" : "", lag_ms, ToSeconds(p.elapsed),
                                    100 * kSendLagSloFraction, lag_slo_ms);
                     }
                     bar.Update(
                         static_cast<double>(p.completed) / total,
                         std::to_string(p.completed) + " done, " + std::to_string(p.ok) + " ok");
                   }));
  bar.Finish();
  for (const std::string& w : report.client_bottleneck.warnings) {
    std::fprintf(stderr, "sloserve loadgen: warning: %s\n", w.c_str());
  }
  double accuracy = suite ? MeanAccuracy(report, *suite) : -1;
  if (args.Has("json")) {
    nlohmann::json j = report.ToJson();
    if (accuracy >= 0) j["accuracy"] = accuracy;
    std::cout << j.dump(2) << std::endl;
  } else {
    std::cout << report.ToText();
    if (accuracy >= 0)
      std::printf("accuracy      %.3f%% (mean over answered requests)\n", accuracy);
  }
  return OkStatus();
}

}  // namespace loadgen_cmd

int LoadgenCommand(const std::vector<std::string>& argv) {
  return RunSubcommand("loadgen", argv, loadgen_cmd::kFlags, loadgen_cmd::PrintHelp,
                       loadgen_cmd::Run, 0);
}

}  // namespace sloserve::cli
