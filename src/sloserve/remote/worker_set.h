#pragma once
// Where an elastic remote worker set comes from (docs/remote-workers.md, "Elastic
// workers"): a file of addresses (server.remote_workers_file, re-read when it changes) or
// a DNS name whose every address is a worker (server.remote_workers: dns:///NAME:PORT, as
// a Kubernetes headless Service gives), re-resolved every few seconds. RemoteExecutor
// maps the addresses onto a fixed number of engine worker slots.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/status.h"
#include "sloserve/core/time.h"

namespace sloserve::remote {

inline constexpr char kDnsScheme[] = "dns:///";

// Whether `target` is the DNS form.
inline bool IsDnsTarget(const std::string& target) {
  return target.rfind(kDnsScheme, 0) == 0;
}

// "dns:///NAME:PORT" -> {NAME, PORT}; an error says what the form is.
StatusOr<std::pair<std::string, std::string>> ParseDnsTarget(const std::string& target);

// A workers file's addresses: HOST:PORT items separated by newlines or commas; blank
// lines and '#' comments are skipped; duplicates kept once, in first-seen order. A bad
// item is an error naming its line (the caller keeps the set it had).
StatusOr<std::vector<std::string>> ParseWorkersFile(const std::string& text);

// Every address NAME resolves to now, with PORT ("10.0.0.5:9000", "[fd00::5]:9000"),
// sorted. A name that does not exist (or has no address: a headless Service without
// ready pods) is an empty set; a temporary failure (no DNS server answered) is
// Unavailable, so the caller keeps the set it had.
StatusOr<std::vector<std::string>> ResolveWorkers(const std::string& name, const std::string& port);

// A worker set's source (one of the two), read again by each Refresh: the file when its
// content changed, the DNS name when `dns_interval` has passed since the last lookup.
// Not thread-safe (RemoteExecutor refreshes it on its health thread).
class WorkerSetSource {
 public:
  WorkerSetSource(std::string workers_file, std::string dns_target, Duration dns_interval)
      : file_(std::move(workers_file)),
        dns_target_(std::move(dns_target)),
        interval_(dns_interval) {}

  // Reads the source if due. An error (the file unreadable or bad, a lookup that failed)
  // keeps the addresses it had.
  Status Refresh(std::chrono::steady_clock::time_point now);
  // The set as last read (empty before the first good read).
  const std::vector<std::string>& addresses() const { return addresses_; }

 private:
  const std::string file_, dns_target_;
  const Duration interval_;
  std::string file_text_;  // the content last parsed
  std::chrono::steady_clock::time_point next_lookup_{};
  std::vector<std::string> addresses_;
};

}  // namespace sloserve::remote
