#pragma once
// SIGINT/SIGTERM handling shared by the long-running commands (serve, worker); SIGHUP
// for serve's certificate reload.
#include <csignal>

namespace sloserve::cli {

// Blocks SIGINT and SIGTERM in the calling thread and returns the set. Call it before any
// thread starts, so every thread inherits the mask and only WaitForStopSignal (or another
// sigwait on the set) receives them: a thread started earlier would die of the default
// action.
sigset_t BlockStopSignals();

// Blocks SIGHUP in the calling thread (serve re-reads its TLS certificate on it) and
// returns the set; same rule as BlockStopSignals: before any thread starts.
sigset_t BlockReloadSignal();

// Waits for one of `signals`, or until `duration_s` passed when it is > 0.
void WaitForStopSignal(const sigset_t& signals, double duration_s);

}  // namespace sloserve::cli
