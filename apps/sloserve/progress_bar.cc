#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace sloserve::cli {

bool StderrIsTerminal() {
  return isatty(STDERR_FILENO) == 1;
}

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  Finish();
}

void ProgressBar::Update(double fraction, const std::string& detail) {
  if (!enabled_ || finished_) return;
  auto now = std::chrono::steady_clock::now();
  if (fraction < 1.0 && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  if (fraction < 0) fraction = 0;
  if (fraction > 1) fraction = 1;
  const int width = 30;
  int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<size_t>(filled), '#');
  bar += std::string(static_cast<size_t>(width - filled), '.');
  double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r%s [%s] %3.0f%% %s %.1fs ", label_.c_str(), bar.c_str(), fraction * 100,
               detail.c_str(), elapsed);
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  std::fprintf(stderr, "\n");
}

}  // namespace sloserve::cli
