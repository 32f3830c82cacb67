#include "stop_signals.h"

#include <pthread.h>

#include <cerrno>
#include <chrono>
#include <ctime>

namespace sloserve::cli {

sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

sigset_t BlockReloadSignal() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void WaitForStopSignal(const sigset_t& signals, double duration_s) {
  if (duration_s > 0) {
    // sigtimedwait returns EINTR when the process is stopped and continued (SIGSTOP then
    // SIGCONT: a worker paused by a debugger or a test) and for signals with handlers;
    // wait again for the time left, or a worker would exit on SIGCONT.
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(duration_s);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      timespec ts;
      ts.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000);
      ts.tv_nsec = static_cast<long>(left.count() % 1'000'000'000);
      if (sigtimedwait(&signals, nullptr, &ts) >= 0 || errno != EINTR) return;
    }
  }
  int sig = 0;
  sigwait(&signals, &sig);  // glibc's sigwait waits again after EINTR itself
}

}  // namespace sloserve::cli
