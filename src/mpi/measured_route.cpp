// mpi/measured_route.cpp — exploration and decisions per class (measured_route.hpp).
#include "mpi/measured_route.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace multilane::mpi {

namespace {

double mean(const auto& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

const char* to_string(DecisionSource source) {
  switch (source) {
    case DecisionSource::Measured:
      return "measured";
    case DecisionSource::Pruned:
      return "pruned";
    case DecisionSource::Remeasured:
      return "measured again";
    case DecisionSource::Model:
      return "model";
    case DecisionSource::TuningFile:
      return "tuning file";
    case DecisionSource::Default:
      return "default route, not measured";
  }
  return "?";
}

std::optional<ClassDecision> Exploration::record(double seconds, const Agreement& agree) {
  const int call = calls_++;
  if (const int in_block = call % kBlockCalls; in_block > 0) {
    (call < kBlockCalls ? mpi_s_ : multilane_s_)[static_cast<std::size_t>(in_block - 1)] = seconds;
  }
  if (call == kPruneAfterCall) {
    double first[2] = {mpi_s_[0], multilane_s_[0]};
    agree(first, 2);
    if (first[1] > kPruneFactor * first[0]) {
      return ClassDecision{.choice = RouteChoice::Mpi,
                           .source = DecisionSource::Pruned,
                           .mpi_s = first[0],
                           .multilane_s = first[1]};
    }
  }
  if (call != kExplorationCalls - 1) return std::nullopt;
  double means[2] = {mean(mpi_s_), mean(multilane_s_)};
  agree(means, 2);
  const bool gains = means[1] <= kSwitchGain * means[0];
  return ClassDecision{.choice = gains ? RouteChoice::Multilane : RouteChoice::Mpi,
                       .source = DecisionSource::Measured,
                       .mpi_s = means[0],
                       .multilane_s = means[1]};
}

const ClassDecision* MeasuredRoutes::decided(std::uint64_t key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end() || !it->second.decision) return nullptr;
  return &*it->second.decision;
}

MeasuredRoutes::Entry* MeasuredRoutes::for_blocking_call(std::uint64_t key, bool explore) {
  if (const auto it = entries_.find(key); it != entries_.end()) return &it->second;
  if (!explore || explored_ >= kMostExploredClasses) return nullptr;
  ++explored_;
  return &entries_[key];
}

// The first re-check of a multilane decision: at call kFirstRecheck, later where the MPI
// library is known to be slower, so that its block costs about as much as at kFirstRecheck
// with equal times (3 calls in 64).
std::uint64_t first_recheck(const ClassDecision& d) {
  const double slower = d.multilane_s > 0 ? std::clamp(d.mpi_s / d.multilane_s, 1.0, 64.0) : 1.0;
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(kFirstRecheck) * slower));
}

bool MeasuredRoutes::Entry::explores_next_call() {
  if (!decision || rechecking) return true;
  if (decision->choice != RouteChoice::Multilane) return false;
  if (next_recheck == 0) next_recheck = first_recheck(*decision);
  if (++decided_calls < next_recheck) return false;
  next_recheck *= kRecheckGrowth;
  rechecking = true;
  exploration = Exploration{};
  return true;
}

void MeasuredRoutes::Entry::settle(const ClassDecision& decided) {
  decision = decided;
  if (rechecking && decided.source == DecisionSource::Measured) {
    decision->source = DecisionSource::Remeasured;
  }
  rechecking = false;
}

void MeasuredRoutes::adopt(std::uint64_t key, const ClassDecision& decision) {
  entries_[key].decision = decision;
}

}  // namespace multilane::mpi
