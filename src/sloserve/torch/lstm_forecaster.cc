#include "sloserve/torch/lstm_forecaster.h"

#include <torch/script.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "sloserve/core/mutex.h"

namespace sloserve {
namespace {

// The first line of a load error: a c10::Error's what() goes on with "Exception raised
// from ..." and C++ stack frames, noise to whoever named the wrong file.
std::string FirstLine(const std::exception& e) {
  const auto* c10e = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10e != nullptr ? c10e->what_without_backtrace() : e.what();
  text = text.substr(0, text.find('\n'));
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
}

class LstmForecaster : public LoadForecaster {
 public:
  LstmForecaster(torch::jit::Module module, std::pair<int64_t, int64_t> trained_on)
      : module_(std::move(module)), trained_on_(trained_on) {}

  std::optional<std::pair<int64_t, int64_t>> TrainedOn() const override { return trained_on_; }

  double Forecast(std::span<const double> history) const override {
    if (history.empty()) return 0;
    std::vector<float> window(kLstmHistorySeconds);
    const size_t n = std::min(history.size(), window.size());
    const size_t pad = window.size() - n;
    const auto recent = history.last(n);
    std::fill_n(window.begin(), pad, static_cast<float>(recent.front()));
    std::transform(recent.begin(), recent.end(), window.begin() + static_cast<ptrdiff_t>(pad),
                   [](double x) { return static_cast<float>(x); });
    auto forecast = Run(window);
    if (forecast.ok()) return *forecast;
    // Checked at load, so unexpected: say it once and provision for the last minute's
    // peak instead of nothing.
    if (!warned_.exchange(true)) {
      std::fprintf(stderr, "sloserve: lstm forecaster: %s; using the last minute's maximum\n",
                   std::string(forecast.status().message()).c_str());
    }
    return *std::max_element(window.end() - 60, window.end());
  }

  // The model's forecast for exactly 600 values; an error when it throws or is not finite.
  StatusOr<double> Run(const std::vector<float>& window) const {
    try {
      c10::InferenceMode guard;
      const torch::Tensor input =
          torch::from_blob(const_cast<float*>(window.data()),
                           {1, static_cast<int64_t>(window.size())}, torch::kFloat32);
      MutexLock lock(mu_);  // a Module's forward is not documented as thread-safe
      const torch::Tensor out = module_.forward({input}).toTensor();
      if (out.numel() != 1) {
        return InvalidArgumentError("returns " + std::to_string(out.numel()) +
                                    " values for one window, expected 1");
      }
      const double v = out.to(torch::kFloat64).item<double>();
      if (!std::isfinite(v)) return InvalidArgumentError("returns a non-finite forecast");
      return std::max(0.0, v);
    } catch (const std::exception& e) {
      return InvalidArgumentError(std::string("forward failed: ") + e.what());
    }
  }

 private:
  mutable torch::jit::Module module_;
  std::pair<int64_t, int64_t> trained_on_;
  mutable Mutex mu_;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace

StatusOr<std::unique_ptr<LoadForecaster>> MakeLstmForecaster(const std::string& path) {
  const std::string where = "option 'lstm_model': '" + path + "'";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgumentError(where +
                                " is not a file (tools/train_load_forecaster.py writes it; "
                                "a relative path is from the config file's folder, else the "
                                "working directory)");
  }
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const std::exception& e) {
    return InvalidArgumentError(where + " is not a loadable TorchScript file (" + FirstLine(e) +
                                ")");
  }
  module.eval();
  if (!module.hasattr("train_begin_s") || !module.hasattr("train_end_s")) {
    return InvalidArgumentError(where +
                                " does not say which trace seconds it was trained on "
                                "(attributes train_begin_s, train_end_s; written by "
                                "tools/train_load_forecaster.py)");
  }
  const std::pair<int64_t, int64_t> trained{module.attr("train_begin_s").toInt(),
                                            module.attr("train_end_s").toInt()};
  auto forecaster = std::make_unique<LstmForecaster>(std::move(module), trained);
  // A flat 10 rps history: checks the signature ([1, 600] -> one finite value).
  auto probe = forecaster->Run(std::vector<float>(kLstmHistorySeconds, 10.0f));
  if (!probe.ok()) return InvalidArgumentError(where + ": " + probe.status().message());
  return std::unique_ptr<LoadForecaster>(std::move(forecaster));
}

void RegisterLstmForecaster() {
  RegisterLoadForecaster(
      "lstm", [](const ForecasterOptions& o) { return MakeLstmForecaster(o.model_path); });
}

}  // namespace sloserve
