#pragma once
// A one-line progress bar on stderr for long runs; silent when stderr is not a terminal
// unless forced, so CI logs stay clean.
#include <chrono>
#include <string>

namespace sloserve::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, bool enabled);
  ~ProgressBar();
  // fraction in [0,1]; `detail` is shown after the bar (e.g. "3/10 runs").
  void Update(double fraction, const std::string& detail);
  void Finish();

 private:
  std::string label_;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

bool StderrIsTerminal();

}  // namespace sloserve::cli
