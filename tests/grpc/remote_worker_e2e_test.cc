// Remote workers end to end with real processes on 127.0.0.1: `sloserve serve` with two
// `sloserve worker` processes, requests over gRPC; one worker is killed mid-run. Every
// request ends exactly once (answered or refused with a status), the engine accounts for
// every arrival, the survivor takes the load, and the restarted worker rejoins. A worker
// restarted on its port gets the variants the engine believes loaded there loaded again.
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grpc/grpc_test_util.h"
#include "grpc/remote_worker_test_util.h"
#include "sloserve/proto/grpc_service.grpc.pb.h"
#include "sloserve/proto/worker_service.grpc.pb.h"
#include "support/counts_summary.h"
#include "support/http_get.h"
#include "support/sanitized.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/thread_switches.h"

namespace sloserve {
namespace {

using remote_test::StartWorker;
using remote_test::TwoWorkerServe;
using remote_test::WriteConfig;
using testing::kBin;
using testing::Subprocess;

// The worker process's own account (its Health reply): the variants it has loaded.
std::vector<std::string> LoadedOn(uint16_t port) {
  auto worker_stub = worker::WorkerService::NewStub(testing::LocalChannel(port));
  worker::HealthReply reply;
  const ::grpc::Status s =
      worker_stub->Health(testing::Deadline().get(), worker::HealthRequest(), &reply);
  EXPECT_TRUE(s.ok()) << s.error_message();
  std::vector<std::string> names;
  for (uint32_t v : reply.loaded_variants()) names.push_back(reply.variant_names(v));
  return names;
}

// The open-loop client: each request's outcome, recorded once per request.
struct Outcomes {
  std::mutex mu;
  std::condition_variable cv;
  int64_t sent = 0, finished = 0, duplicate = 0;
  std::map<std::string, int64_t> by_code_or_worker;  // "w0", "w1", or the gRPC code
  std::vector<std::string> after_kill;               // worker or code of late requests
};

TEST(RemoteWorkerE2E, KilledWorkerFailsItsActionsAndTheSurvivorTakesTheLoad) {
  testing::ScopedTempDir dir("remote-e2e");
  TwoWorkerServe two;
  ASSERT_NO_FATAL_FAILURE(two.Start(WriteConfig(dir)));
  const std::string& config = two.config;
  const uint16_t p1 = two.p1, http_port = two.http_port;
  std::unique_ptr<Subprocess>& w1 = two.w1;
  Subprocess& serve = *two.serve;

  auto& stub = two.stub;
  const inference::ModelMetadataResponse& meta = two.meta;

  Outcomes out;
  std::atomic<bool> killed{false};
  struct Call {
    ::grpc::ClientContext ctx;
    inference::ModelInferRequest req;
    inference::ModelInferResponse resp;
    std::atomic<int> done{0};
    bool after_kill = false;
  };
  std::vector<std::unique_ptr<Call>> calls;
  auto send = [&] {
    auto c = std::make_unique<Call>();
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    c->req = testing::ImageRequest(meta, 1);
    c->after_kill = killed.load();
    Call* raw = c.get();
    {
      std::lock_guard<std::mutex> lock(out.mu);
      ++out.sent;
    }
    calls.push_back(std::move(c));
    stub->async()->ModelInfer(&raw->ctx, &raw->req, &raw->resp, [&out, raw](::grpc::Status s) {
      std::lock_guard<std::mutex> lock(out.mu);
      if (raw->done.fetch_add(1) > 0) ++out.duplicate;
      ++out.finished;
      const std::string key = s.ok() ? raw->resp.parameters().at("worker").string_param()
                                     : std::to_string(s.error_code());
      ++out.by_code_or_worker[key];
      if (raw->after_kill) out.after_kill.push_back(key);
      out.cv.notify_all();
    });
  };
  // 2 s at 50 req/s, kill w1, 2 s more.
  const auto period = std::chrono::milliseconds(20);
  auto next = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    if (i == 100) {
      w1->Signal(SIGKILL);
      w1->Wait();
      killed = true;
    }
    send();
    next += period;
    std::this_thread::sleep_until(next);
  }
  {
    std::unique_lock<std::mutex> lock(out.mu);
    ASSERT_TRUE(
        out.cv.wait_for(lock, std::chrono::seconds(30), [&] { return out.finished == out.sent; }))
        << out.finished << " of " << out.sent << " requests ended";
  }
  EXPECT_TRUE(serve.WaitForStderr("is down", std::chrono::seconds(5))) << serve.err();
  EXPECT_EQ(out.duplicate, 0);
  // Before the kill both workers served.
  EXPECT_GT(out.by_code_or_worker["w0"], 0);
  EXPECT_GT(out.by_code_or_worker["w1"], 0);
  // After it, the survivor took the load: of the requests sent after the kill, most were
  // served, by w0; the few in flight on w1 or dispatched before it was marked down were
  // re-queued (served by w0) or dropped with an error. "Most" is two thirds: the share
  // that also meets the 1 s SLO depends on the machine (80-100% on a quiet one, 72% once
  // at load 11), while without failover at least the half dispatched to w1 is lost.
  int64_t served_after = 0, by_w1_after = 0;
  for (const std::string& k : out.after_kill) {
    served_after += k == "w0" ? 1 : 0;
    by_w1_after += k == "w1" ? 1 : 0;
  }
  EXPECT_EQ(by_w1_after, 0);
  EXPECT_GE(3 * served_after, 2 * static_cast<int64_t>(out.after_kill.size()))
      << "served by w0 after the kill: " << served_after << " of " << out.after_kill.size() << " ("
      << testing::CountsSummary(out.by_code_or_worker) << ")\n"
      << serve.err();
  // The engine ended every query it admitted exactly once.
  const int64_t arrived = testing::MetricValue(http_port, "sloserve_queries_arrived_total");
  const int64_t ended =
      testing::MetricValue(http_port, "sloserve_queries_finished_total{outcome=\"met\"}") +
      testing::MetricValue(http_port, "sloserve_queries_finished_total{outcome=\"late\"}") +
      testing::MetricValue(http_port, "sloserve_queries_finished_total{outcome=\"dropped\"}");
  EXPECT_EQ(arrived, out.sent);
  EXPECT_EQ(ended, arrived);

  // Restarted on its port, w1 passes its health checks and rejoins.
  w1 = StartWorker(config, p1);
  EXPECT_TRUE(serve.WaitForStderr("healthy again", std::chrono::seconds(10))) << serve.err();
  std::map<std::string, int> workers = testing::InferOneByOne(stub.get(), calls.front()->req, 40);
  EXPECT_GT(workers["w1"], 0);
  EXPECT_GT(workers["w0"], 0);

  // The model repository drives the remote workers' lifecycle: unloading sends each an
  // UnloadVariant, loading a LoadVariant again (counted by the controller per variant).
  const std::string loads = "sloserve_variant_loads_total{variant=\"resnet18\"}";
  const int64_t loads_before = std::max<int64_t>(0, testing::MetricValue(http_port, loads));
  inference::RepositoryModelUnloadRequest unload;
  unload.set_model_name("image");
  inference::RepositoryModelUnloadResponse unloaded;
  ::grpc::Status s = stub->RepositoryModelUnload(testing::Deadline().get(), unload, &unloaded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  inference::ModelInferResponse resp;
  EXPECT_EQ(stub->ModelInfer(testing::Deadline().get(), calls.front()->req, &resp).error_code(),
            ::grpc::StatusCode::FAILED_PRECONDITION);
  inference::RepositoryModelLoadRequest load;
  load.set_model_name("image");
  inference::RepositoryModelLoadResponse loaded;
  s = stub->RepositoryModelLoad(testing::Deadline().get(), load, &loaded);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GE(testing::MetricValue(http_port, loads) - loads_before, 2);  // on both workers
  s = stub->ModelInfer(testing::Deadline().get(), calls.front()->req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  serve.Signal(SIGTERM);
  const int exit_code = serve.Wait().exit_code;
#if defined(__SANITIZE_ADDRESS__)
  // Debian's gRPC is not built with ASan; LeakSanitizer may count its process-lifetime
  // allocations at exit (exit code 23). Not verified yet: accepted, not hidden.
  EXPECT_TRUE(exit_code == 0 || exit_code == 23) << exit_code;
#else
  EXPECT_EQ(exit_code, 0);
#endif
}

TEST(RemoteWorkerE2E, RestartedWorkerGetsItsResidentVariantsLoadedAgain) {
  testing::ScopedTempDir dir("remote-restart");
  TwoWorkerServe two;
  ASSERT_NO_FATAL_FAILURE(two.Start(WriteConfig(dir, "resnet18,resnet50")));
  const std::string& config = two.config;
  const uint16_t p0 = two.p0, p1 = two.p1;
  std::unique_ptr<Subprocess>& w1 = two.w1;
  Subprocess& serve = *two.serve;
  auto& stub = two.stub;
  const inference::ModelInferRequest& req = two.request;
  auto infer = [&](int n) { return testing::InferOneByOne(stub.get(), req, n); };

  // The engine starts with resnet18 and resnet50 resident on both workers: before
  // serving, the controller loaded them on the worker processes.
  const std::vector<std::string> initial = {"resnet18", "resnet50"};
  EXPECT_EQ(LoadedOn(p0), initial);
  EXPECT_EQ(LoadedOn(p1), initial);
  EXPECT_NE(serve.err().find("w1 (127.0.0.1:" + std::to_string(p1) +
                             ") loaded the variants resident at start: resnet18, resnet50"),
            std::string::npos)
      << serve.err();
  EXPECT_GT(infer(10)["w1"], 0);

  // Killed, the server keeps answering (w0 serves; a batch lost on w1 is re-queued).
  w1->Signal(SIGKILL);
  w1->Wait();
  infer(10);
  // Restarted on its port: a new process; the controller loads both on it before it
  // rejoins, and it serves again.
  w1 = StartWorker(config, p1);
  ASSERT_TRUE(
      serve.WaitForStderr("restarted: loaded its 2 resident variant(s) again (resnet18, resnet50)",
                          std::chrono::seconds(10)))
      << serve.err();
  ASSERT_TRUE(serve.WaitForStderr("w1 (127.0.0.1:" + std::to_string(p1) + ") is healthy again",
                                  std::chrono::seconds(10)))
      << serve.err();
  EXPECT_EQ(LoadedOn(p1), initial);
  EXPECT_GT(infer(10)["w1"], 0);
}

// The variants resident at start are loaded on an emulated worker without emulating
// their cold starts (the engine counts none): t5-translation's profile gives its four
// variants 86 s of load time in all, yet the server is ready within the usual wait.
TEST(RemoteWorkerE2E, EmulatedWorkerHoldsTheInitialResidentsWithoutColdStarts) {
  testing::ScopedTempDir dir("remote-at-start");
  const std::string config = dir.File("t5.yaml");
  std::ofstream(config) << "suite: t5-translation\n"
                           "task: translation\n"
                           "hardware: c220g5\n"
                           "workers: 1\n"
                           "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                           "selection: fixed, variant: t5-small}\n";
  const uint16_t port = testing::FreeTcpPort();
  auto worker = StartWorker(config, port);
  Subprocess serve({kBin, "serve", config, "--port", "0", "--remote-worker",
                    "127.0.0.1:" + std::to_string(port), "--duration", "60"});
  ASSERT_TRUE(serve.WaitForStderr("sloserve: ready", std::chrono::seconds(40))) << serve.err();
  EXPECT_EQ(LoadedOn(port), (std::vector<std::string>{"t5-small", "t5-base", "t5-large", "t5-3b"}));
}

// A config with `models:` from two suites (the composed suite, docs/multi-model.md): each
// `sloserve worker` composes the same suite as serve, so serve accepts them, and each
// model's requests run on the worker whose hardware serves it (image on n1-4cpu, translate
// on c220g5). Before, a worker loaded only the config's `suite:` and serve refused it.
TEST(RemoteWorkerE2E, WorkersServeAModelsListComposedFromSeveralSuites) {
  testing::ScopedTempDir dir("remote-models");
  const std::string config = dir.File("two.yaml");
  std::ofstream(config) << "suite: ramsis-image\n"
                           "hardware: \"n1-4cpu:1,c220g5:1\"\n"
                           "executor: {latency: sample, time_scale: 0.01}\n"
                           "engine: {admission: off}\n"  // t5 at 20 qps: over its profile
                           "policy: {name: s, dispatch: jsq, batching: edf, selection: fixed, "
                           "variant: image/resnet18}\n"
                           "models:\n"
                           "  - {name: image, suite: ramsis-image, slo_ms: 400,\n"
                           "     policy: {selection: fixed, variant: image/resnet18}}\n"
                           "  - {name: translate, suite: t5-translation, variants: t5-small,\n"
                           "     slo_ms: 2500, policy: {selection: fixed, variant: "
                           "translate/t5-small}}\n";
  const uint16_t p0 = testing::FreeTcpPort(), p1 = testing::FreeTcpPort();
  auto w0 = StartWorker(config, p0);
  auto w1 = StartWorker(config, p1);
  ASSERT_NE(w0->err().find("suite ramsis-image+t5-translation"), std::string::npos) << w0->err();
  Subprocess serve({kBin, "serve", config, "--port", "0", "--duration", "60", "--remote-worker",
                    "127.0.0.1:" + std::to_string(p0), "--remote-worker",
                    "127.0.0.1:" + std::to_string(p1)});
  ASSERT_TRUE(serve.WaitForStderr("sloserve: ready", std::chrono::seconds(40))) << serve.err();
  const std::string port = std::to_string(remote_test::HttpPortOf(serve));
  for (const auto& [model, hardware] :
       {std::pair<std::string, std::string>{"image", "n1-4cpu"}, {"translate", "c220g5"}}) {
    SCOPED_TRACE(model);
    auto load = testing::RunProcess({kBin, "loadgen", "--port", port, "--model", model, "--qps",
                                     "20", "--duration", "1", "--json"});
    ASSERT_EQ(load.exit_code, 0) << load.err;
    const auto report = nlohmann::json::parse(load.out);
    EXPECT_GT(report["sent"].get<int>(), 5);
    EXPECT_EQ(report["ok"], report["sent"]) << load.out;
    EXPECT_EQ(report["hardware_counts"], (nlohmann::json{{hardware, report["ok"]}})) << load.out;
  }
}

// A zero-cost model (time_scale 0): every result is due at once, so the worker answers
// on the thread that read the action (no timer thread). Concurrent Runs from several
// client threads are each answered, successfully; a Load and an Unload are
// answered and change what the worker reports loaded.
TEST(RemoteWorkerE2E, ZeroCostActionsAreAnsweredAtOnceEachOnce) {
  testing::ScopedTempDir dir("remote-zero-cost");
  const std::string config = dir.File("zero.yaml");
  std::ofstream(config) << "suite: ramsis-image\n"
                           "task: image\n"
                           "hardware: n1-4cpu\n"
                           "workers: 1\n"
                           "executor: {latency: sample, time_scale: 0}\n"
                           "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                           "selection: fixed, variant: resnet18}\n";
  const uint16_t port = testing::FreeTcpPort();
  auto worker = StartWorker(config, port);
  auto stub = worker::WorkerService::NewStub(testing::LocalChannel(port));
  constexpr int kThreads = 4, kRunsEach = 50;
  std::atomic<int> ok{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRunsEach; ++i) {
        worker::RunRequest req;
        req.set_action(static_cast<uint64_t>(t * kRunsEach + i));
        req.set_rows(2);
        req.set_start_within_us(-1);
        for (int q = 0; q < 2; ++q) {
          worker::Query* wq = req.add_queries();
          wq->set_id(static_cast<uint64_t>((t * kRunsEach + i) * 2 + q));
          wq->set_size(1);
          wq->set_slo_us(1'000'000);
          wq->set_deadline_in_us(1'000'000);
        }
        worker::ActionReply reply;
        const ::grpc::Status s = stub->Run(testing::Deadline().get(), req, &reply);
        if (s.ok() && reply.code() == 0) {
          ok.fetch_add(1);
        } else if (errors[t].empty()) {
          errors[t] = s.error_message() + " / " + std::to_string(reply.code()) + " " +
                      reply.message() + "; ";
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kRunsEach) << errors[0] << errors[1] << errors[2] << errors[3];

  // Variant 1 is not resident at start: Load it (a zero-cost cold start), then Unload it.
  auto lifecycle = [&](bool load) {
    worker::LifecycleRequest req;
    req.set_action(load ? 1000 : 1001);
    req.set_variant(1);
    worker::ActionReply reply;
    const ::grpc::Status s = load ? stub->Load(testing::Deadline().get(), req, &reply)
                                  : stub->Unload(testing::Deadline().get(), req, &reply);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(reply.code(), 0) << reply.message();
  };
  const std::vector<std::string> before = LoadedOn(port);
  lifecycle(true);
  std::vector<std::string> loaded = LoadedOn(port);
  EXPECT_EQ(loaded.size(), before.size() + 1);
  lifecycle(false);
  EXPECT_EQ(LoadedOn(port), before);
}

// Without a gRPC port, serve reads the workers' replies on a queue thread of its own
// ("remote-replies"), which answers them itself while the engine thread is idle, as the
// HTTP io threads step for the requests they read and write the Runs: every request is
// answered once, the engine thread is not woken per request (before: 502 times for 120
// requests, for each hand-off, reply and deadline), and serve stops cleanly under load, the
// workers' calls leaving that queue first.
TEST(RemoteWorkerE2E, HttpOnlyServeAnswersRepliesOnItsOwnQueueThreadAndStopsUnderLoad) {
  testing::ScopedTempDir dir("remote-http-only");
  const std::string config = dir.File("zero.yaml");
  std::ofstream(config) << "suite: ramsis-image\n"
                           "task: image\n"
                           "hardware: n1-4cpu\n"
                           "workers: 2\n"
                           "executor: {latency: sample, time_scale: 0}\n"
                           "engine: {admission: off}\n"
                           "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                           "selection: fixed, variant: resnet18}\n"
                           "server: {input_shape: \"-1,16\"}\n";
  const uint16_t p0 = testing::FreeTcpPort(), p1 = testing::FreeTcpPort();
  auto w0 = StartWorker(config, p0);
  auto w1 = StartWorker(config, p1);
  Subprocess serve({kBin, "serve", config, "--port", "0", "--duration", "120", "--remote-worker",
                    "127.0.0.1:" + std::to_string(p0), "--remote-worker",
                    "127.0.0.1:" + std::to_string(p1)});
  ASSERT_TRUE(serve.WaitForStderr("sloserve: ready", std::chrono::seconds(40))) << serve.err();
  const std::string port = std::to_string(remote_test::HttpPortOf(serve));

  // Light load: requests 20 ms apart on average, each on an idle engine thread.
  const long engine_before = testing::VoluntarySwitches(serve.pid(), "engine");
  auto light = testing::RunProcess({kBin, "loadgen", "--port", port, "--model", "image", "--qps",
                                    "50", "--duration", "2", "--json"});
  ASSERT_EQ(light.exit_code, 0) << light.err;
  const long engine_woken = testing::VoluntarySwitches(serve.pid(), "engine") - engine_before;
  const auto report = nlohmann::json::parse(light.out);
  const int sent = report["sent"].get<int>();
  EXPECT_GT(sent, 40);
  EXPECT_EQ(report["ok"], sent) << light.out;
  // Before, every request woke it at least twice (4.2 times on average). Now a request
  // wakes it only when it finds a step running and is handed off: rarely on a quiet machine,
  // more often when a step is slow (TSan: 74 wake-ups for 120 requests; a Release build
  // beside two busy loops on 2 cores: 100 for 120). So the bound is 1.5 per request.
  const int bound = sent * 3 / 2;
  EXPECT_LT(engine_woken, bound) << "the engine thread was woken " << engine_woken << " times for "
                                 << sent << " requests";

  // SIGTERM under load: serve drains and exits 0; every request sent ends (answered, or
  // refused once serve is gone), none waits for its timeout.
  Subprocess heavy({kBin, "loadgen", "--port", port, "--model", "image", "--qps", "400",
                    "--duration", "3", "--timeout", "10", "--json"});
  std::this_thread::sleep_for(std::chrono::seconds(1));
  serve.Signal(SIGTERM);
  const auto stopped = serve.Wait();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  const auto load = heavy.Wait();
  const auto r = nlohmann::json::parse(load.out);
  EXPECT_GT(r["ok"].get<int>(), 100) << load.out;
  EXPECT_EQ(r["timeouts"], 0) << load.out;
  EXPECT_EQ(r["ok"].get<int>() + r["http_errors"].get<int>() + r["transport_errors"].get<int>(),
            r["sent"].get<int>())
      << load.out;
}

// With no request in flight, a worker marked down showed in sloserve_workers_unreachable
// (read live) while sloserve_active_workers kept the engine's last published count (2)
// until the next request: the engine's control step now publishes its snapshot.
TEST(RemoteWorkerE2E, ActiveWorkerGaugesFollowAWorkerDownWhileIdle) {
  testing::ScopedTempDir dir("remote-idle-gauges");
  TwoWorkerServe two;
  ASSERT_NO_FATAL_FAILURE(two.Start(WriteConfig(dir)));
  EXPECT_EQ(testing::MetricValue(two.http_port, "sloserve_active_workers"), 2);
  two.w1->Signal(SIGKILL);
  two.w1->Wait();
  ASSERT_TRUE(two.serve->WaitForStderr("is down", std::chrono::seconds(30))) << two.serve->err();
  // The engine handles the mark (a control step) right after the log line.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(testing::MetricValue(two.http_port, "sloserve_active_workers"), 1);
  EXPECT_EQ(testing::MetricValue(two.http_port, "sloserve_workers_unreachable"), 1);
}

TEST(RemoteWorkerE2E, TimingOptionsAreRangeChecked) {
  testing::ScopedTempDir dir("remote-options");
  const std::string config = WriteConfig(dir);
  // Refused before any worker is contacted (none listens on port 1), naming key and range.
  for (const auto& [set, range] : std::vector<std::pair<std::string, std::string>>{
           {"server.remote_health_interval_ms=0", "[10, 60000]"},
           {"server.remote_failures_to_down=0", "[1, 100]"},
           {"server.remote_reconnect_backoff_ms=5", "[10, 600000]"}}) {
    Subprocess serve(
        {kBin, "serve", config, "--port", "0", "--remote-worker", "127.0.0.1:1", "--set", set});
    const int exit_code = serve.Wait().exit_code;
    EXPECT_NE(exit_code, 0) << set;
    const std::string key = set.substr(0, set.find('='));
    EXPECT_NE(serve.err().find(key), std::string::npos) << serve.err();
    EXPECT_NE(serve.err().find(range), std::string::npos) << serve.err();
  }
}

}  // namespace
}  // namespace sloserve
