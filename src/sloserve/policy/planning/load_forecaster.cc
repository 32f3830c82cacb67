#include "sloserve/policy/planning/load_forecaster.h"

#include <algorithm>
#include <map>

namespace sloserve {
namespace {

class LastValue : public LoadForecaster {
 public:
  double Forecast(std::span<const double> h) const override { return h.empty() ? 0 : h.back(); }
};

class MovingMax : public LoadForecaster {
 public:
  explicit MovingMax(int window) : window_(static_cast<size_t>(window)) {}
  double Forecast(std::span<const double> h) const override {
    const size_t n = std::min(window_, h.size());
    double m = 0;
    for (double x : h.last(n)) m = std::max(m, x);
    return m;
  }

 private:
  size_t window_;
};

class Ewma : public LoadForecaster {
 public:
  explicit Ewma(double alpha) : alpha_(alpha) {}
  double Forecast(std::span<const double> h) const override {
    if (h.empty()) return 0;
    double s = h.front();
    for (double x : h.subspan(1)) s = alpha_ * x + (1 - alpha_) * s;
    return s;
  }

 private:
  double alpha_;
};

std::map<std::string, LoadForecasterFactory>& Registered() {
  static std::map<std::string, LoadForecasterFactory> factories;
  return factories;
}

}  // namespace

void RegisterLoadForecaster(const std::string& kind, LoadForecasterFactory factory) {
  Registered()[kind] = std::move(factory);
}

StatusOr<std::unique_ptr<LoadForecaster>> MakeLoadForecaster(const ForecasterOptions& o) {
  if (auto it = Registered().find(o.kind); it != Registered().end()) return it->second(o);
  if (o.kind == "lstm") {
    return InvalidArgumentError(
        "option 'forecaster': 'lstm' runs on LibTorch, and this sloserve was built without it "
        "(SLOSERVE_WITH_TORCH off, as in clang builds); use moving_max, last_value or ewma, "
        "or a GCC build with libtorch-dev");
  }
  if (o.kind == "last_value") return std::unique_ptr<LoadForecaster>(new LastValue());
  if (o.kind == "moving_max") {
    if (o.window_s < 1)
      return InvalidArgumentError("option 'forecast_window_s' must be >= 1 (seconds)");
    return std::unique_ptr<LoadForecaster>(new MovingMax(o.window_s));
  }
  if (o.kind == "ewma") {
    if (!(o.ewma_alpha > 0 && o.ewma_alpha <= 1))
      return InvalidArgumentError("option 'ewma_alpha' must be in (0, 1]");
    return std::unique_ptr<LoadForecaster>(new Ewma(o.ewma_alpha));
  }
  return InvalidArgumentError("option 'forecaster': unknown forecaster '" + o.kind +
                              "' (known: ewma, last_value, lstm, moving_max)");
}

}  // namespace sloserve
