// A small gRPC load client for `sloserve serve --grpc-port` (or any KServe v2 gRPC
// server): unary ModelInfer calls with an FP32 input of `--shape`, closed loop
// (`--concurrency` calls always outstanding: the server's requests/s) or open loop
// (`--rate` calls per second on a fixed schedule, whatever the answers: latency at a
// given load). Prints one JSON object: requests, errors, achieved requests/s and latency
// percentiles (ms) of the successful calls. docs/benchmarks.md ("gRPC and remote workers").
//
//   grpc_load --target 127.0.0.1:8001 --model image --shape 1,16 --concurrency 32 --duration 10
//   grpc_load --target 127.0.0.1:8001 --model image --shape 1,16 --rate 1000 --duration 10
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/proto/grpc_service.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string target = "127.0.0.1:8001";
  std::string model = "image";
  std::string input = "input";
  std::vector<int64_t> shape = {1, 16};
  int concurrency = 16;
  double rate = 0;  // > 0: open loop
  double duration_s = 10;
  int channels = 4;  // calls are spread over this many channels (connections)
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "grpc_load: %s\nusage: grpc_load [--target HOST:PORT] [--model NAME] "
               "[--input NAME] [--shape 1,16] [--concurrency 1..100000 | --rate 1..1e7] "
               "[--duration 0.1..3600] [--channels 1..256]\n",
               problem.c_str());
  std::exit(2);
}

double Number(const char* flag, const char* text, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) {
    Usage(std::string(flag) + " must be a number in [" + std::to_string(lo) + ", " +
          std::to_string(hi) + "], got '" + text + "'");
  }
  return v;
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage("missing value after " + flag);
    const char* v = argv[++i];
    if (flag == "--target") {
      a.target = v;
    } else if (flag == "--model") {
      a.model = v;
    } else if (flag == "--input") {
      a.input = v;
    } else if (flag == "--shape") {
      a.shape.clear();
      for (std::string s = v; !s.empty();) {
        const size_t comma = s.find(',');
        const std::string item = s.substr(0, comma);
        a.shape.push_back(static_cast<int64_t>(Number("--shape", item.c_str(), 1, 1 << 20)));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
      }
    } else if (flag == "--concurrency") {
      a.concurrency = static_cast<int>(Number("--concurrency", v, 1, 100000));
    } else if (flag == "--rate") {
      a.rate = Number("--rate", v, 1, 1e7);
    } else if (flag == "--duration") {
      a.duration_s = Number("--duration", v, 0.1, 3600);
    } else if (flag == "--channels") {
      a.channels = static_cast<int>(Number("--channels", v, 1, 256));
    } else {
      Usage("unknown flag " + flag);
    }
  }
  return a;
}

struct Results {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<double> latencies_ms;  // successful calls
  int64_t errors = 0;
  int64_t outstanding = 0;
};

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);  // numpy's "linear"
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  inference::ModelInferRequest request;
  request.set_model_name(args.model);
  auto* in = request.add_inputs();
  in->set_name(args.input);
  in->set_datatype("FP32");
  int64_t elements = 1;
  for (int64_t d : args.shape) {
    in->add_shape(d);
    elements *= d;
  }
  request.add_raw_input_contents(std::string(static_cast<size_t>(elements) * 4, '\0'));

  std::vector<std::unique_ptr<inference::GRPCInferenceService::Stub>> stubs;
  for (int c = 0; c < args.channels; ++c) {
    ::grpc::ChannelArguments ch;
    ch.SetInt("grpc.channel_id", c);  // distinct arguments: distinct connections
    stubs.push_back(inference::GRPCInferenceService::NewStub(
        ::grpc::CreateCustomChannel(args.target, ::grpc::InsecureChannelCredentials(), ch)));
  }
  Results results;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(args.duration_s));
  std::atomic<uint64_t> next_stub{0};
  // One call; `again` (closed loop) sends the next when it ends, until the end time.
  std::function<void(bool)> send = [&](bool again) {
    struct Call {
      ::grpc::ClientContext ctx;
      inference::ModelInferResponse resp;
      Clock::time_point sent;
    };
    auto* call = new Call;
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    call->sent = Clock::now();
    {
      std::lock_guard<std::mutex> lock(results.mu);
      ++results.outstanding;
    }
    auto& stub = stubs[next_stub.fetch_add(1) % stubs.size()];
    stub->async()->ModelInfer(
        &call->ctx, &request, &call->resp, [&, call, again](::grpc::Status s) {
          const auto done = Clock::now();
          const auto sent = call->sent;
          delete call;
          // The next call is counted before this one is uncounted, and the count is
          // notified under the lock: once main sees none outstanding it returns and
          // destroys what this callback uses (it crashed when a call was sent after).
          if (again && done < end) send(true);
          std::lock_guard<std::mutex> lock(results.mu);
          if (s.ok()) {
            results.latencies_ms.push_back(
                std::chrono::duration<double, std::milli>(done - sent).count());
          } else {
            ++results.errors;
          }
          --results.outstanding;
          results.cv.notify_all();
        });
  };
  if (args.rate > 0) {
    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / args.rate));
    for (auto at = start; at < end; at += period) {
      std::this_thread::sleep_until(at);
      send(false);
    }
  } else {
    for (int i = 0; i < args.concurrency; ++i) send(true);
    std::this_thread::sleep_until(end);
  }
  std::unique_lock<std::mutex> lock(results.mu);
  results.cv.wait(lock, [&] { return results.outstanding == 0; });
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double>& l = results.latencies_ms;
  const size_t ok = l.size();
  std::printf(
      "{\"mode\":\"%s\",\"offered_rate\":%.0f,\"concurrency\":%d,\"requests\":%zu,"
      "\"errors\":%lld,\"achieved_rps\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
      "\"max_ms\":%.3f}\n",
      args.rate > 0 ? "open" : "closed", args.rate, args.rate > 0 ? 0 : args.concurrency, ok,
      static_cast<long long>(results.errors), static_cast<double>(ok) / elapsed, Percentile(l, 0.5),
      Percentile(l, 0.9), Percentile(l, 0.99), Percentile(l, 1.0));
  return results.errors > 0 && ok == 0 ? 1 : 0;
}
