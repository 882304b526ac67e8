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

Exploration::Exploration(int candidates)
    : kept_(static_cast<std::size_t>(1 + std::max(candidates, 1))),
      pruned_(static_cast<std::size_t>(1 + std::max(candidates, 1)), false) {}

std::optional<ClassDecision> Exploration::record(double seconds, const Agreement& agree) {
  ++calls_;
  const int in_block = in_block_++;
  auto& kept = kept_[static_cast<std::size_t>(block_)];
  if (in_block > 0) kept[static_cast<std::size_t>(in_block - 1)] = seconds;
  bool block_done = in_block_ == kBlockCalls;
  if (block_ > 0 && in_block == 1) {
    // The first kept call of a multilane candidate: out at twice the MPI library's time.
    double first[2] = {kept_[0][0], kept[0]};
    agree(first, 2);
    if (first[1] > kPruneFactor * first[0]) {
      pruned_[static_cast<std::size_t>(block_)] = true;
      kept[1] = kept[0];  // its one kept call is its mean
      block_done = true;
    }
  }
  if (!block_done) return std::nullopt;
  ++block_;
  in_block_ = 0;
  if (block_ < static_cast<int>(kept_.size())) return std::nullopt;
  return decide(agree);
}

std::optional<ClassDecision> Exploration::decide(const Agreement& agree) {
  std::vector<double> means;
  for (const auto& block : kept_) means.push_back(mean(block));
  agree(means.data(), static_cast<int>(means.size()));
  int best = -1;
  for (std::size_t c = 1; c < means.size(); ++c) {
    if (pruned_[c]) continue;
    if (best < 0 || means[c] < means[static_cast<std::size_t>(best) + 1]) {
      best = static_cast<int>(c) - 1;
    }
  }
  const bool all_pruned = best < 0;
  const std::size_t shown = all_pruned ? 1 : static_cast<std::size_t>(best) + 1;
  const bool gains = !all_pruned && means[shown] <= kSwitchGain * means[0];
  return ClassDecision{.choice = gains ? RouteChoice::Multilane : RouteChoice::Mpi,
                       .source = all_pruned ? DecisionSource::Pruned : DecisionSource::Measured,
                       .candidate = std::max(best, 0),
                       .mpi_s = means[0],
                       .multilane_s = means[shown]};
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
  explore({decision->algorithm});
  return true;
}

void MeasuredRoutes::Entry::explore(std::vector<std::string> algorithms) {
  candidates = std::move(algorithms);
  exploration = Exploration(static_cast<int>(candidates.size()));
}

std::string_view MeasuredRoutes::Entry::next_algorithm() const {
  const int c = exploration.next();
  if (c == Exploration::kMpi || c >= static_cast<int>(candidates.size())) return {};
  return candidates[static_cast<std::size_t>(c)];
}

void MeasuredRoutes::Entry::settle(const ClassDecision& decided) {
  decision = decided;
  if (decided.choice == RouteChoice::Multilane &&
      decided.candidate < static_cast<int>(candidates.size())) {
    decision->algorithm = candidates[static_cast<std::size_t>(decided.candidate)];
  }
  if (rechecking) decision->source = DecisionSource::Remeasured;  // pruned or not
  rechecking = false;
}

void MeasuredRoutes::adopt(std::uint64_t key, const ClassDecision& decision) {
  entries_[key].decision = decision;
}

}  // namespace multilane::mpi
