#include "sloserve/exec/routing_executor.h"

#include <string>

namespace sloserve {
namespace {

TimePoint StartOf(const WorkerAction& a) {
  if (const auto* run = std::get_if<RunBatch>(&a)) return run->earliest_start;
  if (const auto* load = std::get_if<LoadVariant>(&a)) return load->sent;
  return std::get<UnloadVariant>(a).sent;
}

}  // namespace

RoutingExecutor::RoutingExecutor(std::unique_ptr<WorkerExecutor> fallback)
    : fallback_(std::move(fallback)) {}

Status RoutingExecutor::AddRoute(Route route) {
  if (!route.executor) return InvalidArgumentError("routing executor: a route without executor");
  for (const auto& [variant, theirs] : route.variants) {
    if (route_of_.count(variant)) {
      return InvalidArgumentError("routing executor: variant " + std::to_string(variant) +
                                  " is routed twice");
    }
  }
  for (const auto& [variant, theirs] : route.variants) route_of_[variant] = routes_.size();
  routes_.push_back(std::move(route));
  return OkStatus();
}

void RoutingExecutor::Attach(ResultSink* sink) {
  WorkerExecutor::Attach(sink);
  fallback_->Attach(sink);
  for (Route& r : routes_) r.executor->Attach(sink);
}

void RoutingExecutor::UseClock(const Clock* clock) {
  fallback_->UseClock(clock);
  for (Route& r : routes_) r.executor->UseClock(clock);
}

Duration RoutingExecutor::Send(const WorkerAction& action) {
  const VariantId variant = std::visit([](const auto& a) { return a.variant; }, action);
  const auto it = route_of_.find(variant);
  if (it == route_of_.end()) return fallback_->Send(action);
  Route& route = routes_[it->second];
  const HardwareId hardware = std::visit([](const auto& a) { return a.hardware; }, action);
  const auto hw = route.hardware.find(hardware);
  if (hw == route.hardware.end()) {
    ActionResult r;
    r.id = IdOf(action);
    r.worker = std::visit([](const auto& a) { return a.worker; }, action);
    r.status = InvalidArgumentError("variant " + std::to_string(variant) +
                                    " is not executable on hardware type " +
                                    std::to_string(hardware) + " (not in its executor's profile)");
    r.begin = r.end = StartOf(action);
    sink_->Post(std::move(r));
    return Duration(0);
  }
  WorkerAction translated = action;
  std::visit(
      [&](auto& a) {
        a.variant = route.variants.at(variant);
        a.hardware = hw->second;
      },
      translated);
  return route.executor->Send(translated);
}

int RoutingExecutor::vacant_workers() const {
  int n = fallback_->vacant_workers();
  for (const Route& r : routes_) n += r.executor->vacant_workers();
  return n;
}

}  // namespace sloserve
