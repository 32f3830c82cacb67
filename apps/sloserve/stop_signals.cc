#include "stop_signals.h"

#include <pthread.h>

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

void WaitForStopSignal(const sigset_t& signals, double duration_s) {
  if (duration_s > 0) {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(duration_s);
    ts.tv_nsec = static_cast<long>((duration_s - static_cast<double>(ts.tv_sec)) * 1e9);
    sigtimedwait(&signals, nullptr, &ts);
  } else {
    int sig = 0;
    sigwait(&signals, &sig);
  }
}

}  // namespace sloserve::cli
