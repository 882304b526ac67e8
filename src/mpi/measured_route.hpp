// mpi/measured_route.hpp — which route each class of calls takes, measured on the job itself.
//
// The rule to keep: never slower than the MPI library underneath. After STAR-MPI (Faraj, Yuan
// and Lowenthal, ICS 2006), each candidate is timed on the application's own first calls and
// the fastest is kept. The candidates: the MPI library (PMPI_*) and k of multilane's algorithms
// (route_policy.hpp: the one MULTILANE_ALGORITHM_<COLL> names, hier-shm within a node, else
// the model's fastest kMostMultilaneCandidates: the model ranks well but does not always put
// the grid's fastest first, nor second: the ring allgatherv on the emulated grid is its third).
//
// Every rank must take the same route at every call, or two ranks deadlock. So:
//   * exploration happens only in blocking calls, and a class's blocking calls are counted
//     alike on every rank (call_class.hpp: a class is the same everywhere);
//   * the first blocking calls of a class run each candidate in a block of its own, the MPI
//     library first (k = 2 here; a class under kShortCallBytes runs blocks of
//     kShortBlockCalls, four dropped and four kept, on either route, see below):
//
//        call   0-1         2     3     4     5     6     7     8     9     (a long class)
//               MPI x 2     MPI   MPI   ml1   ml1   ml1   ml2   ml2   ml2   (ml: multilane)
//               drop        keep  keep  drop  keep  keep  drop  keep  keep
//                                             │                 │     └─ decide: agree(means)
//                                             │                 └─ prune: agree(MPI, ml2)
//                                             └─ prune: agree(MPI, ml1); ml1 > 2x MPI ends it
//
//     (a pruned candidate's block ends at once; after the last block the class is decided; a
//     short class's blocks run to their end, and the decision is its only agreement, see
//     prunes_within_block())
//
//     the first call of a long class's multilane block is dropped (it pays for connections,
//     schedules and caches, and for what the other candidate left behind), and the first two
//     calls of its MPI library block; a short class's blocks drop four calls on either route.
//     The MPI library's first calls at a size, or after other routes ran, are slow for about
//     four calls (Open MPI's reduce on 4 ranks of one node, in us: 256 KiB 290, 161, 90, 90,
//     then 58-60; 1 MiB 626, 341, 241, 225, then 214-257), and rating it by them sends classes
//     to multilane that its steady state serves faster. So are multilane's after the MPI
//     library's calls where these hold a core: MPICH polls without yielding, and with 4 ranks on
//     2 cores hier-shm's bcasts of 4 B-8 KiB after its block took 80-2300 us in their second to
//     fourth calls, against 1-2 us once settled. Those calls run at a route's own speed, so the
//     longer block costs the program little against it alone. The kept calls follow calls of their
//     own candidate, as they will once the class is decided. A collective that lets some ranks
//     leave early (Open MPI's reduce: the non-roots) overlaps its calls in a loop of its own, and
//     call-by-call alternation would hide that;
//   * each rank rates a block by the median of its kept calls: a call of a few microseconds
//     that the scheduler delays (two ranks sharing a core, an interrupt) costs tens, so one
//     such call would outweigh the block; so a short class keeps four calls a block, and
//     their median ignores one delayed call in either direction;
//   * at the two fixed indices `agree` makes the ratings common. In a short class each becomes
//     its mean over the ranks, the time the average rank spends in the call (what OSU reports,
//     and what an application's ranks lose in it; the slowest rank's time would rate a
//     collective that frees most ranks early like one that holds them all). A long class's
//     calls start together and are rated by the slowest rank (rates_slowest_rank()). The
//     decision is a pure function of equal inputs, so every rank decides alike;
//   * multilane's fastest unpruned candidate is kept only for a gain of kSwitchGain (10%) or more
//     over the MPI library; the decision names the algorithm;
//   * a class decided for multilane is measured again, the same way, at its kFirstRecheck-th
//     blocking call after the decision (counted over the runs that share a tuning file) and then at
//     every kRecheckGrowth-fold count (64, 512, 4096, ...; the counts grow by the MPI library's
//     time over multilane's when that is above 1 and known from a re-measurement or the model,
//     so that its calls cost the same share; a first exploration's ratio rates cold calls;
//     a re-check a run ends unfinished is redone by the next run, see calls_this_run()),
//     against the decided algorithm alone (k = 1), whose block runs first so that it goes on
//     from the route's steady state (after the MPI library's calls, hier-shm's next ones are
//     slower: a bcast of 64 KiB that OSU times at 3.6 us rated 41 us there): a decision from a
//     few early calls (cold caches, the MPI library's lazy set-up, a tuning file from another
//     run) may be wrong for the job's steady state, and the MPI library is the route that is
//     never slower than itself. The cost vanishes geometrically. A class decided for the MPI
//     library is not measured again in blocks (its steady check, below, times its own calls);
//   * at most kMostExploredClasses classes per communicator are explored; beyond that, and in
//     the frozen mode, an undecided class takes the default route (dispatch.cpp).
// Decisions made elsewhere (a communicator of the same placement, the tuning file, the model
// across sites) are adopted as they are.
//
// No MPI here: the caller supplies `agree`, and this stays testable on its own.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpi/wrapped_call.hpp"

namespace multilane::mpi {

enum class RouteChoice : std::uint8_t { Mpi, Multilane };

// Whether a class of `call` is rated by the interval between its calls rather than by each
// call's own time: the barrier, whose own time does not show the skew it leaves the ranks
// with, which the calls after it pay (on one node, OSU's calls after a barrier that multilane
// won by its own time lost up to 6x). From the end of one barrier to the end of the next,
// the program's work between them counts too: in a loop, what an iteration costs on each
// route; the 10% a switch needs is then 10% of the iteration.
inline bool rates_interval(WrappedCall call) {
  return call == WrappedCall::Barrier;
}

inline constexpr int kBlockCalls = 3;  // a long class's multilane block: one dropped, two kept
// The MPI library's block of a long class drops two calls (its calls take long enough that
// the first ones' extra cost weighs less, and its exploration fits in 13 calls), and keeps as
// many as multilane's.
inline constexpr int kMpiDroppedLongCalls = 2;
// A short class's block, on either route: four calls dropped, four kept.
inline constexpr int kShortDroppedCalls = 4;
inline constexpr int kShortKeptCalls = 4;
inline constexpr int kShortBlockCalls = kShortDroppedCalls + kShortKeptCalls;
inline constexpr std::uint64_t kShortCallBytes = 1 << 20;  // a class below this is short
// The block of a class of `bytes` (CallClass: the same on every rank).
inline int block_calls(std::uint64_t bytes) {
  return bytes < kShortCallBytes ? kShortBlockCalls : kBlockCalls;
}
// Whether the class of `key` is long (kBlockCalls a block: 1 MiB or more, or a v-form whose
// sizes are per rank), whose timed calls (explored, or of a steady check) start at a
// PMPI_Barrier and whose agreements take the slowest rank's rating. Its calls are bound by
// bandwidth: a rank that leaves early has only handed its bytes to buffers that the links still
// carry, and one that arrives late finds them arrived. Rated by the mean over ranks, calls back
// to back, multilane's linear gather of 1 MiB blocks on the emulated grid (non-roots' calls of
// a few ms, the root receiving the next call's blocks while the dropped call runs) rates
// 55.9 ms against Open MPI's 204, yet takes longer than Open MPI's in the program's loop.
bool rates_slowest_rank(std::uint64_t key);

inline constexpr int kMostMultilaneCandidates = 3;
inline constexpr double kSwitchGain = 0.9;   // multilane at 0.9x the MPI library's time
inline constexpr double kPruneFactor = 2.0;  // a candidate at 2x the MPI library's is out
inline constexpr std::size_t kMostExploredClasses = 64;
inline constexpr std::uint64_t kFirstRecheck = 64;  // blocking calls after a multilane decision
inline constexpr std::uint64_t kRecheckGrowth = 8;

// Where a decision came from, for MULTILANE_EXPLAIN and the tuning file.
// Default: a default route that is no measurement and no model price (a class not measured in
// the frozen mode or past the cap).
// Remeasured: a multilane route measured again in its steady state (kFirstRecheck), or an
// MPI library's route after its steady check.
// Unfinished: the MPI library's, for a class whose exploration a run ended before it decided
// (a run that calls the class fewer times than the exploration takes would otherwise explore
// it anew every run and never decide, its calls alternating between the candidates): explored
// again from the start at the class's kFirstRecheck-th call, then every kRecheckGrowth-fold
// count, counted over the runs that share a tuning file.
enum class DecisionSource : std::uint8_t {
  Measured,
  Pruned,
  Remeasured,
  Model,
  TuningFile,
  Default,
  Unfinished
};
const char* to_string(DecisionSource source);

struct ClassDecision {
  RouteChoice choice = RouteChoice::Mpi;
  DecisionSource source = DecisionSource::Measured;
  // Multilane's algorithm when `choice` is Multilane; empty: the call's candidate (its forced
  // algorithm, hier-shm or "auto").
  std::string algorithm{};
  int candidate = 0;  // Exploration::record(): which of the explored candidates won
  // The agreed mean time of each candidate (mean over calls and ranks); 0 where not measured.
  double mpi_s = 0;
  double multilane_s = 0;
  bool from_tuning_file = false;  // read from MULTILANE_TUNING rather than decided in this run
  // Blocking calls made on a multilane route (or, Unfinished, of the class) by earlier runs
  // (the tuning file's count): its re-measurements come at the 64th, 512th... call counted
  // over the runs, so that a class a run calls a few times is measured again in a later run.
  std::uint64_t calls = 0;
  // A route in its steady check: the timed calls, over the runs that share a tuning file, whose
  // mean the route's own time is (`mpi_s` on the MPI library's route, `multilane_s` on
  // multilane's; 0: that time is the blocks' rating).
  std::uint64_t steady_calls = 0;
};

// A decision for the MPI library by block medians (a first exploration's, or a re-check's,
// whose source is then "measured" too) is checked in its steady state: in windows of
// kSteadySkippedCalls calls skipped, after the route's start in a run or the last window's
// agreement, then kSteadyWindowCalls calls timed; at each window's end one
// agreement pools their mean over calls and ranks with the earlier windows' (the tuning file's
// `steady_calls`, over runs). The class goes to multilane as soon as the pooled mean is
// kPruneFactor times multilane's measured time or more; the check ends there, or when
// kSteadyPooledCalls calls are pooled (the decision then reads "measured again", either way).
// The exploration rates a block by its median, which stands for the calls that the scheduler
// leaves alone; a route whose waits hold a core delays a share of its calls by a time slice,
// which only a mean over more calls shows (MPICH's small bcasts on 4 ranks of 2 cores: medians
// of 1-25 us in the MPI library's block, 80-400 us OSU averages on that route, 1.3-2.9 us on
// hier-shm). One window can miss them: OSU's 33 calls a size leave one window a run, and
// MPICH's scatter of 4 KiB averaged 11.9 us in one and 426 us over OSU's 30 timed calls.
//
// A short class decided for multilane by block medians (measured, or measured again by a
// re-check or by the MPI library's steady check) is checked the same way from the other side:
// the pooled mean of its windows becomes `multilane_s`, and the class goes back to the MPI
// library as soon as that is the MPI library's time or more; the check ends there or at
// kMultilaneSteadyCalls: three windows, which fit in the 64 calls before the route's first
// re-check (a re-check starts the check afresh). Block medians hide a short route's long tail:
// OSU's gathers of 1-2 B on 4 ranks of 2 cores rated hier-shm 1.89 us against the MPI
// library's 2.47 us, and OSU's means were 2.89 us against 2.27 us alone. The MPI library is the
// route that is never slower than itself, so its rating (a block median, or its own steady
// mean) is the bar. A long class's calls take milliseconds or more, whose medians and means
// agree; it is not checked.
inline constexpr int kSteadySkippedCalls = 4;  // before each window
inline constexpr int kSteadyWindowCalls = 12;
inline constexpr std::uint64_t kSteadyPooledCalls = 48;
inline constexpr std::uint64_t kMultilaneSteadyCalls = 3 * kSteadyWindowCalls;
inline bool awaits_steady_check(const ClassDecision& d) {
  return d.choice == RouteChoice::Mpi && d.source == DecisionSource::Measured;
}
inline bool awaits_multilane_steady_check(const ClassDecision& d, int block) {
  return d.choice == RouteChoice::Multilane && block == kShortBlockCalls &&
         (d.source == DecisionSource::Measured || d.source == DecisionSource::Remeasured) &&
         d.steady_calls < kMultilaneSteadyCalls;
}

// Whether an exploring run keeps the decision for the rest of the run: a route to the MPI
// library is never measured again once checked in its steady state, unless its exploration was
// unfinished (explored again at a later call); a multilane route is re-checked.
inline bool kept_for_the_run(const ClassDecision& d) {
  return d.choice != RouteChoice::Multilane && d.source != DecisionSource::Unfinished &&
         !awaits_steady_check(d);
}

// Makes `values` common to every rank of the communicator: each becomes its mean over the
// ranks. Collective: every rank calls it at the same point.
using AgreeMean = void (*)(void* context, double* values, int count);
struct Agreement {
  AgreeMean function = nullptr;
  void* context = nullptr;
  void operator()(double* values, int count) const { function(context, values, count); }
};

// The exploration of one class against `candidates` of multilane's algorithms: what its next
// blocking call runs, and its times so far.
class Exploration {
 public:
  static constexpr int kMpi = -1;
  // `block`: kBlockCalls (a long class: calls per multilane candidate, the first dropped; the
  // MPI library's block drops kMpiDroppedLongCalls and keeps as many) or kShortBlockCalls.
  // `multilane_first`: the candidates' blocks run before the MPI library's (a re-check: its
  // first block then goes on from the decided route's steady state); no candidate is pruned.
  explicit Exploration(int candidates = 1, int block = kBlockCalls, bool multilane_first = false);
  // Whose turn it is: kMpi, or the index of multilane's candidate.
  int next() const { return block() - 1; }
  RouteChoice next_route() const {
    return next() == kMpi ? RouteChoice::Mpi : RouteChoice::Multilane;
  }
  // Records this rank's time of the call next() named; at the fixed indices, agrees with the
  // other ranks (collective) and returns the decision once there is one (`candidate` set).
  std::optional<ClassDecision> record(double seconds, const Agreement& agree);
  int calls() const { return calls_; }
  // This rank's rating of the MPI library so far (the median of its kept calls; 0 before).
  double mpi_rating() const { return kept_[0].median(); }
  // The calls the exploration takes when no candidate is pruned.
  int most_calls() const {
    const int multilane_blocks = static_cast<int>(kept_.size()) - 1;
    return shape_.mpi_dropped + shape_.kept +
           multilane_blocks * (shape_.multilane_dropped + shape_.kept);
  }

 private:
  struct Kept {
    std::array<double, kShortKeptCalls> times{};
    int count = 0;
    double median() const;
  };
  // Whether a multilane candidate may be pruned on its first kept call: in a long class, whose
  // calls take up to seconds on a WAN. A short class's block runs to its end: its remaining
  // calls cost little, and the agreement a prune check needs is an MPI library collective that
  // delays the calls after it (MPICH's polls without yielding: with 4 ranks on 2 cores, its
  // allreduce left the next two hier-shm bcasts of 4 B at 60-3500 us against 1 us, and their
  // block's median at 30 us, so that the class stayed with MPICH at 25 us).
  bool prunes_within_block() const { return shape_.kept < kShortKeptCalls; }
  std::optional<ClassDecision> decide(const Agreement& agree);
  // The block running now: 0, the MPI library's; c + 1, multilane's candidate c.
  int block() const;
  // The calls each block keeps, and drops before them, by block length (block_calls()).
  struct Shape {
    int kept;
    int mpi_dropped;
    int multilane_dropped;
  };
  static Shape shape_of(int block);
  // The calls a block drops before it keeps shape_.kept.
  int dropped_calls() const { return block() == 0 ? shape_.mpi_dropped : shape_.multilane_dropped; }
  Shape shape_;
  int calls_ = 0;
  bool multilane_first_;
  int blocks_done_ = 0;
  int in_block_ = 0;        // calls of the current block so far
  std::vector<Kept> kept_;  // the kept times of each block
  std::vector<bool> pruned_;
};

// The routes of one communicator's classes, by CallClass::key().
class MeasuredRoutes {
 public:
  struct Entry {
    std::optional<ClassDecision> decision;
    Exploration exploration;
    std::vector<std::string> candidates;  // multilane's algorithms the exploration times
    int block = kBlockCalls;  // calls per candidate (block_calls() of the class), re-checks too
    // When the class's latest explored call ended on this rank (for a barrier's interval).
    std::chrono::steady_clock::time_point last_end{};
    bool rechecking = false;          // a decided multilane route is measured again
    std::uint64_t decided_calls = 0;  // blocking calls on the decided route, earlier runs' too
    std::uint64_t calls_before = 0;   // of those, the earlier runs' (the decision's `calls`)
    std::uint64_t next_recheck = 0;   // 0: not yet set from the decision
    // A steady check (awaits_steady_check()): the calls since its window started, counted to
    // kSteadySkippedCalls + 1; the window's timed calls; their time.
    int steady_calls = 0;
    int window_calls = 0;
    double steady_s = 0;
    void start_steady_window() {
      steady_calls = 0;
      window_calls = 0;
      steady_s = 0;
    }

    // Whether the class's next blocking call runs the exploration (rather than its decision):
    // undecided, re-checked, or a multilane decision whose re-check falls on this call. An
    // Unfinished decision whose count falls on this call is dropped: the class is undecided
    // again, and its exploration starts from the beginning.
    bool explores_next_call();
    // Whether the decided route is in its steady check (either route's).
    bool in_steady_check() const {
      return decision && !rechecking &&
             (awaits_steady_check(*decision) || awaits_multilane_steady_check(*decision, block));
    }
    // In a steady check, counts a decided call towards the calls that open its next window.
    void count_decided_call();
    // Whether the call that explores_next_call() did not explore is timed for the steady check:
    // from the last skipped one, whose end starts a barrier's first interval.
    bool times_decided_call() const {
      return in_steady_check() && steady_calls >= kSteadySkippedCalls;
    }
    // Records this rank's time of a call times_decided_call() named; at a window's end agrees
    // with the other ranks (collective) and returns the decision with the window pooled, for
    // settle().
    std::optional<ClassDecision> record_steady(double seconds, const Agreement& agree);
    // Starts the exploration of `algorithms` in blocks of `block` calls (an undecided class's
    // first blocking call, or a re-check).
    void explore(std::vector<std::string> algorithms);
    // The algorithm of the exploration's next call ("" for the MPI library's).
    std::string_view next_algorithm() const;
    // This rank's time of an explored call of `call` that ran from `started` to `ended`: its
    // own time, or where rates_interval(call) the time since the end of the class's previous
    // explored call (its own time at the first, which its block drops).
    double rating(WrappedCall call, std::chrono::steady_clock::time_point started,
                  std::chrono::steady_clock::time_point ended);
    // Takes the exploration's (or the steady check's) decision, naming its algorithm, and ends
    // a re-check.
    void settle(const ClassDecision& decided);
    // This run's calls on the decided route, for the tuning file's `calls`. A re-check the run
    // ended before it finished is due again at the next run's first call, when this run called
    // the class at least as often as the re-check takes (the next run likely finishes it): the
    // call that started it is not counted. Otherwise it waits for the next count, as a class
    // that each run calls a few times must not spend every run in the MPI library's block.
    std::uint64_t calls_this_run() const;
    // The Unfinished decision of a class whose exploration this run started and did not end
    // (nullopt otherwise), its count covering this run's calls; mpi_s: this rank's rating of
    // the MPI library, where its block ended.
    std::optional<ClassDecision> unfinished() const;
  };
  // The class's decision, or null while it has none.
  const ClassDecision* decided(std::uint64_t key) const;
  // The entry of a class to run a blocking call of: its decision or its exploration; null when
  // the class is undecided and may not be explored (the cap, or `explore` false).
  Entry* for_blocking_call(std::uint64_t key, bool explore);
  // Once the barrier (rates_interval()) is decided for multilane, every other class the MPI
  // library kept by measurement is measured again from its next blocking call: it was measured
  // behind the MPI library's barrier, whose skew the calls after it pay or do not (MPICH's
  // small bcasts on 4 ranks of 2 cores rated multilane at 1.9 ms behind MPICH's barrier and
  // 1.3-2.9 us, as fast as MPICH alone, behind multilane's). The same on every rank: the
  // barrier decides at the same call everywhere. A class whose exploration is under way starts
  // it again (its MPI library's block may have run behind the MPI library's barrier).
  void measure_mpi_classes_again();
  // Takes a decision made elsewhere; its `calls` count as made on the route already.
  void adopt(std::uint64_t key, const ClassDecision& decision);
  const std::unordered_map<std::uint64_t, Entry>& entries() const { return entries_; }

 private:
  // The class's entry, made with its block length when new.
  Entry& entry_of(std::uint64_t key);
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::size_t explored_ = 0;
};

}  // namespace multilane::mpi
