// mpi/measured_route.cpp — exploration and decisions per class (measured_route.hpp).
#include "mpi/measured_route.hpp"

#include <algorithm>
#include <cmath>

#include "mpi/call_class.hpp"

namespace multilane::mpi {

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
    case DecisionSource::Unfinished:
      return "unfinished";
  }
  return "?";
}

double Exploration::Kept::median() const {
  if (count == 0) return 0;
  std::array<double, kShortKeptCalls> sorted = times;
  for (int i = 1; i < count; ++i) {  // insertion sort of at most four
    for (int j = i;
         j > 0 && sorted[static_cast<std::size_t>(j)] < sorted[static_cast<std::size_t>(j - 1)];
         --j) {
      std::swap(sorted[static_cast<std::size_t>(j)], sorted[static_cast<std::size_t>(j - 1)]);
    }
  }
  const auto middle = static_cast<std::size_t>(count / 2);
  return count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

Exploration::Shape Exploration::shape_of(int block) {
  if (block == kShortBlockCalls) {
    return {.kept = kShortKeptCalls,
            .mpi_dropped = kShortDroppedCalls,
            .multilane_dropped = kShortDroppedCalls};
  }
  return {
      .kept = std::max(block, 2) - 1, .mpi_dropped = kMpiDroppedLongCalls, .multilane_dropped = 1};
}

Exploration::Exploration(int candidates, int block, bool multilane_first)
    : shape_(shape_of(block)),
      multilane_first_(multilane_first),
      kept_(static_cast<std::size_t>(1 + std::max(candidates, 1))),
      pruned_(static_cast<std::size_t>(1 + std::max(candidates, 1)), false) {}

// The blocks run 0 (the MPI library), 1, 2... or, multilane first, 1, 2, ..., 0.
int Exploration::block() const {
  const int blocks = static_cast<int>(kept_.size());
  return multilane_first_ ? (blocks_done_ + 1) % blocks : blocks_done_;
}

std::optional<ClassDecision> Exploration::record(double seconds, const Agreement& agree) {
  ++calls_;
  const int in_block = in_block_++;
  const int dropped = dropped_calls();
  const int block = this->block();
  Kept& kept = kept_[static_cast<std::size_t>(block)];
  if (in_block >= dropped) kept.times[static_cast<std::size_t>(kept.count++)] = seconds;
  bool block_done = in_block_ == dropped + shape_.kept;
  if (block > 0 && prunes_within_block() && in_block == dropped && !multilane_first_) {
    // A multilane candidate is out when its first kept call took twice the MPI library's time.
    double first[2] = {kept_[0].median(), kept.times[0]};
    agree(first, 2);
    if (first[1] > kPruneFactor * first[0]) {
      pruned_[static_cast<std::size_t>(block)] = true;  // rated by that call
      block_done = true;
    }
  }
  if (!block_done) return std::nullopt;
  in_block_ = 0;
  if (++blocks_done_ < static_cast<int>(kept_.size())) return std::nullopt;
  return decide(agree);
}

std::optional<ClassDecision> Exploration::decide(const Agreement& agree) {
  std::vector<double> means;  // over the ranks (or their slowest), of each rank's median
  for (const Kept& block : kept_) means.push_back(block.median());
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
  return &entry_of(key);
}

// The first re-check of a multilane decision: at call kFirstRecheck, later where the MPI
// library is known to be slower, so that its block costs about as much as at kFirstRecheck
// with equal times. Known: measured again in the steady state, or priced by the model. A
// first exploration's ratio does not delay it: it rates the job's first calls (MPICH's small
// bcasts of 128 B-8 KiB on 4 ranks of one node: 5-14 us there, 0.9-1.6 us in OSU's timed
// calls), and the re-check is what corrects it.
bool knows_steady_ratio(const ClassDecision& d) {
  return d.source == DecisionSource::Remeasured || d.source == DecisionSource::Model;
}

std::uint64_t first_recheck(const ClassDecision& d) {
  const double slower = d.multilane_s > 0 && knows_steady_ratio(d)
                            ? std::clamp(d.mpi_s / d.multilane_s, 1.0, 64.0)
                            : 1.0;
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(kFirstRecheck) * slower));
}

void MeasuredRoutes::Entry::count_decided_call() {
  if (in_steady_check() && steady_calls <= kSteadySkippedCalls) ++steady_calls;  // then all count
}

bool MeasuredRoutes::Entry::explores_next_call() {
  if (!decision || rechecking) return true;
  if (awaits_steady_check(*decision)) {
    count_decided_call();
    return false;
  }
  if (kept_for_the_run(*decision)) return false;
  const bool unfinished = decision->source == DecisionSource::Unfinished;
  if (next_recheck == 0) {
    next_recheck = first_recheck(*decision);
    while (next_recheck <= decided_calls) next_recheck *= kRecheckGrowth;
  }
  if (++decided_calls < next_recheck) {
    count_decided_call();
    return false;
  }
  next_recheck *= kRecheckGrowth;
  if (unfinished) {
    --decided_calls;  // this call is the exploration's first
    decision.reset();
    exploration = Exploration();
    return true;
  }
  rechecking = true;
  explore({decision->algorithm});
  return true;
}

std::optional<ClassDecision> MeasuredRoutes::Entry::record_steady(double seconds,
                                                                  const Agreement& agree) {
  if (steady_calls <= kSteadySkippedCalls) return std::nullopt;  // starts a barrier's interval
  steady_s += seconds;
  if (++window_calls < kSteadyWindowCalls) return std::nullopt;
  double mean = steady_s / kSteadyWindowCalls;
  agree(&mean, 1);
  // The agreement skews the ranks: the next window skips the route's first calls after it
  // too (Open MPI's bcast of 1 B on 4 pinned ranks averaged 1.4 us over windows that followed
  // one at once, against 0.41 us in OSU).
  start_steady_window();
  ClassDecision checked = *decision;
  const bool on_mpi = checked.choice == RouteChoice::Mpi;
  double& route_s = on_mpi ? checked.mpi_s : checked.multilane_s;
  const auto pooled = checked.steady_calls + kSteadyWindowCalls;
  const double earlier = static_cast<double>(checked.steady_calls) * route_s;
  route_s = (earlier + kSteadyWindowCalls * mean) / static_cast<double>(pooled);
  checked.steady_calls = pooled;
  const double other_s = on_mpi ? checked.multilane_s : checked.mpi_s;
  const double bar = on_mpi ? kPruneFactor * other_s : other_s;
  if (other_s > 0 && route_s >= bar) {
    // The other route takes the class; steady_calls counts only the calls behind the route's
    // own time, and the new route's has none.
    checked.choice = on_mpi ? RouteChoice::Multilane : RouteChoice::Mpi;
    checked.source = DecisionSource::Remeasured;
    checked.steady_calls = 0;
    if (!on_mpi) checked.algorithm.clear();
  } else if (pooled >= (on_mpi ? kSteadyPooledCalls : kMultilaneSteadyCalls)) {
    checked.source = DecisionSource::Remeasured;
  }
  return checked;
}

void MeasuredRoutes::Entry::explore(std::vector<std::string> algorithms) {
  candidates = std::move(algorithms);
  start_steady_window();  // a steady check after this exploration skips the route's first calls
  exploration = Exploration(static_cast<int>(candidates.size()), block, rechecking);
}

std::string_view MeasuredRoutes::Entry::next_algorithm() const {
  const int c = exploration.next();
  if (c == Exploration::kMpi || c >= static_cast<int>(candidates.size())) return {};
  return candidates[static_cast<std::size_t>(c)];
}

double MeasuredRoutes::Entry::rating(WrappedCall call,
                                     std::chrono::steady_clock::time_point started,
                                     std::chrono::steady_clock::time_point ended) {
  const bool after_one =
      rates_interval(call) && last_end != std::chrono::steady_clock::time_point{};
  const auto from = after_one ? last_end : started;
  last_end = ended;
  return std::chrono::duration<double>(ended - from).count();
}

// A re-check that keeps multilane's route measured it again in its steady state. One that hands
// the class to the MPI library rated it by block medians, as a first exploration does, and its
// steady check follows (awaits_steady_check()): MPICH's bcast of 4 B behind multilane's barrier
// on 4 ranks of 2 cores rated 1.3 us there, and averaged 70-440 us over 2000 calls.
DecisionSource source_of_recheck(RouteChoice choice) {
  return choice == RouteChoice::Multilane ? DecisionSource::Remeasured : DecisionSource::Measured;
}

void MeasuredRoutes::Entry::settle(const ClassDecision& decided) {
  decision = decided;
  if (decided.choice == RouteChoice::Multilane &&
      decided.candidate < static_cast<int>(candidates.size())) {
    decision->algorithm = candidates[static_cast<std::size_t>(decided.candidate)];
  }
  if (rechecking) decision->source = source_of_recheck(decided.choice);
  rechecking = false;
}

std::uint64_t MeasuredRoutes::Entry::calls_this_run() const {
  const std::uint64_t made = decided_calls - calls_before;
  const bool recheck_cut_short = rechecking && made > 0;
  if (!recheck_cut_short) return made;
  const auto recheck_calls = static_cast<std::uint64_t>(exploration.most_calls());
  // The call that started the re-check is its first.
  const std::uint64_t called = made - 1 + static_cast<std::uint64_t>(exploration.calls());
  return called >= recheck_calls ? made - 1 : made;
}

std::optional<ClassDecision> MeasuredRoutes::Entry::unfinished() const {
  if (decision || exploration.calls() == 0) return std::nullopt;
  return ClassDecision{.choice = RouteChoice::Mpi,
                       .source = DecisionSource::Unfinished,
                       .mpi_s = exploration.mpi_rating(),
                       .calls = decided_calls + static_cast<std::uint64_t>(exploration.calls())};
}

// A class of any size (gatherv, scatterv, alltoallv) is taken as long.
int block_of_class(std::uint64_t key) {
  const CallClass c = CallClass::from_key(key);
  return sizes_per_rank(c.call) ? kBlockCalls : block_calls(lowest_bytes(c));
}

bool rates_slowest_rank(std::uint64_t key) {
  return block_of_class(key) == kBlockCalls;
}

MeasuredRoutes::Entry& MeasuredRoutes::entry_of(std::uint64_t key) {
  const auto [it, made] = entries_.try_emplace(key);
  if (made) it->second.block = block_of_class(key);
  return it->second;
}

// Whether a class's measurement of the MPI library may have run behind the MPI library's
// barrier: decided for it by measurement, or exploring (undecided, its first calls made).
bool measured_behind_the_barrier(const MeasuredRoutes::Entry& entry) {
  const std::optional<ClassDecision>& d = entry.decision;
  if (!d) return entry.exploration.calls() > 0;
  return d->choice == RouteChoice::Mpi &&
         (d->source == DecisionSource::Measured || d->source == DecisionSource::Pruned ||
          d->source == DecisionSource::Remeasured);
}

void MeasuredRoutes::measure_mpi_classes_again() {
  for (auto& [key, entry] : entries_) {
    if (rates_interval(CallClass::from_key(key).call) || !measured_behind_the_barrier(entry)) {
      continue;
    }
    entry.decision.reset();
    entry.rechecking = false;
    entry.exploration = Exploration();
  }
}

void MeasuredRoutes::adopt(std::uint64_t key, const ClassDecision& decision) {
  Entry& entry = entry_of(key);
  entry.decision = decision;
  entry.decided_calls = entry.calls_before = decision.calls;
  entry.next_recheck = 0;
}

}  // namespace multilane::mpi
