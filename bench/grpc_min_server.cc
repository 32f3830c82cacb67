// The anchor for gRPC's own cost (issue 35 item 4, issue 38): a minimal asynchronous
// C++ gRPC server answering KServe v2 `ModelInfer` with a fixed response, built the way
// gRPC's own examples and its qps benchmark server are (one completion queue per thread,
// calls requested ahead, no work per call but building the reply). It plays nginx's role
// for the HTTP path: the same client drives it and `sloserve serve --grpc-port` in one
// run, and the ratio of their CPU per request and requests/s is what is compared
// (bench/cpu_per_request.sh, docs/benchmarks.md).
//
//   grpc_min_server [--port 0] [--threads N]   (default: one thread per core)
// Prints "listening on grpc://127.0.0.1:PORT" on stderr and serves until killed.
#include <grpcpp/grpcpp.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sloserve/proto/grpc_service.grpc.pb.h"

namespace {

using inference::GRPCInferenceService;

// One ModelInfer call: requested, then answered, then recycled for the next call.
class Call {
 public:
  Call(GRPCInferenceService::AsyncService* service, ::grpc::ServerCompletionQueue* cq)
      : service_(service), cq_(cq), writer_(&ctx_) {
    service_->RequestModelInfer(&ctx_, &request_, &writer_, cq_, cq_, this);
  }
  // Called with the completion queue's event for this call.
  void Proceed(bool ok) {
    if (answered_ || !ok) {  // the reply was sent (or the server is shutting down)
      delete this;
      return;
    }
    new Call(service_, cq_);  // the next call is requested before this one is answered
    inference::ModelInferResponse reply;
    reply.set_model_name(request_.model_name());
    auto* out = reply.add_outputs();
    out->set_name("output");
    out->set_datatype("FP32");
    out->add_shape(1);
    out->add_shape(1);
    reply.add_raw_output_contents(std::string(4, '\0'));
    answered_ = true;
    writer_.Finish(reply, ::grpc::Status::OK, this);
  }

 private:
  GRPCInferenceService::AsyncService* service_;
  ::grpc::ServerCompletionQueue* cq_;
  ::grpc::ServerContext ctx_;
  inference::ModelInferRequest request_;
  ::grpc::ServerAsyncResponseWriter<inference::ModelInferResponse> writer_;
  bool answered_ = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr, "grpc_min_server: %s\nusage: grpc_min_server [--port 0] [--threads N]\n",
               problem.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage("missing value after " + flag);
    const int v = std::atoi(argv[++i]);
    if (flag == "--port" && v >= 0 && v < 65536) {
      port = v;
    } else if (flag == "--threads" && v >= 1 && v <= 256) {
      threads = v;
    } else {
      Usage("bad flag or value: " + flag + " " + argv[i]);
    }
  }
  threads = std::max(threads, 1);
  GRPCInferenceService::AsyncService service;
  ::grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), ::grpc::InsecureServerCredentials(),
                           &bound);
  builder.RegisterService(&service);
  std::vector<std::unique_ptr<::grpc::ServerCompletionQueue>> cqs;
  for (int t = 0; t < threads; ++t) cqs.push_back(builder.AddCompletionQueue());
  std::unique_ptr<::grpc::Server> server = builder.BuildAndStart();
  if (!server || bound == 0) Usage("cannot listen on 127.0.0.1:" + std::to_string(port));
  std::fprintf(stderr, "listening on grpc://127.0.0.1:%d\n", bound);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&service, cq = cqs[t].get()] {
      pthread_setname_np(pthread_self(), "cq");
      for (int k = 0; k < 8; ++k) new Call(&service, cq);  // calls requested ahead
      void* tag = nullptr;
      bool ok = false;
      while (cq->Next(&tag, &ok)) static_cast<Call*>(tag)->Proceed(ok);
    });
  }
  for (auto& t : pool) t.join();  // until killed
}
