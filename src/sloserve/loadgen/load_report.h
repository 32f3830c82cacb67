#pragma once
// LoadReport: what an open-loop load run measured, and LoadRecorder, which builds it
// from per-request results. Definitions (docs/loadgen.md):
//   latency      scheduled send time -> response fully read (so queueing inside the
//                generator counts: no coordinated omission); percentiles over OK responses
//   achieved_qps completed requests / duration, duration = start -> last completion
//   slo_attainment_client  (# OK with latency <= slo_ms) / sent   (errors count as misses)
//   slo_attainment_server  (# OK with server-reported met_slo) / sent
//   client_bottleneck      whether the generator itself limited the run: p99 send lag
//                          above kSendLagSloFraction of the SLO, or requests that waited
//                          because every one of max_connections was busy
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sloserve/core/time.h"

namespace sloserve {

// The send lag (actual write start - scheduled time) above which the generator, not the
// server, is named as the bottleneck: this fraction of the SLO.
inline constexpr double kSendLagSloFraction = 0.10;

// Is the client the bottleneck? Filled by AssessClientBottleneck (RunLoad calls it).
struct ClientBottleneck {
  double send_lag_p99_ms = 0;  // nearest-rank p99 over every send (on-time sends count as 0)
  double send_lag_max_ms = 0;
  double slo_ms = 0;                  // SLO the lag is compared with; <= 0: unknown, no lag check
  double send_lag_limit_ms = 0;       // kSendLagSloFraction * slo_ms (0 when no SLO)
  int max_connections = 0;            // the cap; 0 = unknown
  int64_t waited_for_connection = 0;  // requests queued because max_connections were busy
  bool send_lag_exceeded = false;
  bool connection_cap_reached = false;  // waited_for_connection > 0
  std::vector<std::string> warnings;    // one line per condition; empty = not the bottleneck

  bool is_bottleneck() const { return !warnings.empty(); }
  nlohmann::json ToJson() const;
};

struct LoadReport {
  int64_t scheduled = 0;         // requests in the schedule
  int64_t sent = 0;              // requests issued (== scheduled unless aborted)
  int64_t ok = 0;                // HTTP 200
  int64_t http_errors = 0;       // other HTTP statuses
  int64_t timeouts = 0;          // no full response within the timeout
  int64_t transport_errors = 0;  // connect/read/write failures
  std::map<int, int64_t> errors_by_status;
  // The first answer of each kind of error (status and message, e.g. 400 "input 'input'
  // has shape [1,16] but ...") so a user sees why requests fail; at most kMaxErrorExamples.
  struct ErrorExample {
    int status = 0;
    std::string message;  // the body's "error" string, else the body (truncated)
  };
  static constexpr size_t kMaxErrorExamples = 8;
  std::vector<ErrorExample> error_examples;
  std::map<std::string, int64_t, std::less<>> variant_counts;  // OK responses per answering variant
  // OK responses per instance type that ran them (the response's parameters.hardware;
  // empty when the server does not report it). Heterogeneous deployments: where queries went.
  std::map<std::string, int64_t, std::less<>> hardware_counts;
  std::string sizes;     // how request rows were drawn, e.g. "constant:1", "deeprecsys"
  double rows_mean = 0;  // mean rows per scheduled request

  Duration duration{};      // start -> last completion
  Duration max_send_lag{};  // worst (actual write start - scheduled time): generator health
  double offered_qps = 0;   // scheduled / schedule span
  double achieved_qps = 0;  // completed / duration

  double latency_mean_ms = 0;
  double latency_p50_ms = 0;
  double latency_p95_ms = 0;
  double latency_p99_ms = 0;
  double latency_max_ms = 0;

  double slo_ms = 0;                 // <= 0: no client-side SLO given
  double slo_attainment_client = 0;  // meaningful only when slo_ms > 0
  double slo_attainment_server = 0;
  int peak_connections = 0;
  ClientBottleneck client_bottleneck;
  // With a labelled dataset: OK responses whose label was checked, and of those the ones
  // whose first output's argmax equals the label (accuracy measured from the responses).
  int64_t labelled = 0;
  int64_t correct = 0;
  // What merging reports (MergeLoadReports) needs, not rendered: the OK responses'
  // latencies, ascending, and of them those within slo_ms / that the server said met.
  std::vector<Duration> ok_latencies;
  int64_t met_client = 0;
  int64_t met_server = 0;

  int64_t completed() const { return ok + http_errors + timeouts + transport_errors; }
  nlohmann::json ToJson() const;
  std::string ToText() const;
};

// Accumulates per-request results; single-threaded.
class LoadRecorder {
 public:
  explicit LoadRecorder(int64_t expected = 0) {
    latencies_.reserve(static_cast<size_t>(expected));
    send_lags_.reserve(static_cast<size_t>(expected));
  }

  // `hardware` empty = not reported by the server (not counted).
  void RecordOk(Duration latency, std::string_view variant, bool met_slo, double slo_ms,
                std::string_view hardware = {});
  // `body`: the answer's body (its "error" message is kept as an example of its kind).
  void RecordHttpError(int status, std::string_view body = {});
  void RecordTimeout() { ++report_.timeouts; }
  void RecordTransportError() { ++report_.transport_errors; }
  // Every send's lag (0 when on time), for the maximum and the p99.
  void RecordSendLag(Duration lag);
  // A request found all max_connections busy and waited in the FIFO.
  void RecordConnectionWait() { ++report_.client_bottleneck.waited_for_connection; }
  // Nearest-rank p99 send lag over `sends` sends, those not recorded yet counted as on
  // time (0). With `sends` = every scheduled send it is, mid-run, a lower bound on the
  // run's final p99 (lags only add), so a live warning on it is never contradicted.
  Duration SendLagP99(int64_t sends) const;
  int64_t completed() const { return report_.completed(); }

  // Computes rates and percentiles. `schedule_span` = last scheduled offset.
  LoadReport Finish(int64_t scheduled, int64_t sent, Duration duration, Duration schedule_span,
                    double slo_ms, int peak_connections);

 private:
  LoadReport report_;
  std::vector<Duration> latencies_;  // OK responses
  std::vector<Duration> send_lags_;  // every send
  int64_t met_client_ = 0;
  int64_t met_server_ = 0;
};

// Fills report.client_bottleneck's verdict from its measured send lags and connection
// waits: a warning when send_lag_p99_ms > kSendLagSloFraction * slo_ms (slo_ms <= 0: the
// SLO is unknown and the lag is not judged) and one when a request waited for a connection
// because `max_connections` were open and busy.
void AssessClientBottleneck(LoadReport& report, double slo_ms, int max_connections);

// The send-lag rule, one for the live warning (loadgen's progress, on
// LoadRecorder::SendLagP99 of the sends so far) and the final verdict: the p99 send lag
// exceeds kSendLagSloFraction of slo_ms. False when the SLO is unknown (slo_ms <= 0).
bool SendLagExceeded(double send_lag_p99_ms, double slo_ms);

// Nearest-rank percentile (q in [0, 1]) of a sorted vector; 0 when empty.
Duration SortedPercentile(const std::vector<Duration>& sorted, double q);

}  // namespace sloserve
