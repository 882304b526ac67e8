// runtime/shm/copy_chooser.hpp — every rank of a group takes the same copy path for the same
// call, while local rank 0 learns which path is faster.
//
//   bool once = chooser.learns(call, can_copy_once)                       // every rank
//                   ? chooser.choose(call, serial, by_limits) : (chooser.pass(), by_limits);
//   ...run the call, timed if chooser.wants_timing()...
//   chooser.finished(took_or_nullopt, bytes);                            // every rank
//
// Which calls learn: alltoall and allgather with blocks of 4 KiB to 1 MiB that could copy
// either way (the kernel allows the single copy and the stage's buffer has room), when the
// group uses the default single-copy limits. Every other call copies as the limits say
// (`by_limits`). Rank 0 runs one PlanLearner per collective and power-of-two size class.
//
// Why the ranks agree without talking: the path of a class is one 64-bit word in the
// segment's header, written by rank 0 only, holding the path before and after a change and
// the serial of the first call that takes the new one. Rank 0 changes it only at the start of
// a call N of those collectives, before it writes anything of call N, and the change takes
// effect at call N + 1. In alltoall and allgather every rank reads what rank 0 wrote in the
// same call (its block), so no rank finishes call N, and so none enters N + 1, before the
// change is visible to it (release and acquire through the stage's sync word); and rank 0
// cannot change the word twice while another rank still has to read the older value, since it
// cannot finish a call of those collectives before that rank entered it. A rank that reads the
// word for call S takes the old path when S is before the change, the new one from it on.
// The call's fingerprint (call_record.hpp) includes the path, so a disagreement would still be
// caught and named rather than corrupt data.
//
// What is learned from: the time of the slowest rank, as the paper measures a collective (a
// two-copy pipeline can let rank 0 finish well before the others). While rank 0's learner
// wants times it sets a bit in the class's word; every rank that sees it times the call and
// leaves the time in its RankRecord, in one of two places taken in turn by the learned calls.
// Rank 0 reads them at the end of its next learned call, when every rank has entered that
// call and so finished the timed one, and none can have overwritten it yet. A time missing
// there (a rank had not seen the bit yet) makes the learner wait for another call.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/plan_learner.hpp"

namespace multilane::runtime::shm {

// A class's word, unpacked: 0 means "nothing learned yet" (the limits decide).
struct CopyChoice {
  bool valid = false;
  bool old_once = false;
  bool new_once = false;
  bool timing = false;            // rank 0 wants the times of the calls
  std::uint64_t from_serial = 0;  // the first call that takes new_once
  bool once_at(std::uint64_t serial) const { return serial >= from_serial ? new_once : old_once; }
};
std::uint64_t pack(const CopyChoice& choice);
CopyChoice unpack_choice(std::uint64_t word);

// The class of a call whose path is learned, or nullopt (see above).
std::optional<std::size_t> copy_choice_class(const CallShape& call);

class CopyChooser {
 public:
  // `view`: the group's segment; `enabled`: false makes choose() return `by_limits` always.
  // Every rank of a group must give the same `enabled`.
  CopyChooser(const SegmentView& view, int local_rank, bool enabled, const PlanLearning& policy);

  // Whether the path of `call` is learned (`can_copy_once`: the kernel and the buffer allow
  // the single copy): then every rank calls choose() for it, else pass().
  bool learns(const CallShape& call, bool can_copy_once) const;
  // The path of call `serial`, one whose path is learned (`by_limits`: the path the group's
  // limits give). Rank 0 first publishes what its learner wants from the next call on.
  bool choose(const CallShape& call, std::uint64_t serial, bool by_limits);
  // Call `serial` takes the path of the limits, unlearned.
  void pass() { current_.reset(); }
  // Whether the call just chosen should be timed.
  bool wants_timing() const;
  // The call just chosen ended; `took`: how long, if it was timed; `bytes`: its largest
  // buffer, so that times of calls of one class compare.
  void finished(std::optional<std::chrono::nanoseconds> took, std::uint64_t bytes);

  // Rounds rank 0 finished and how many switched a path, over all classes (for tests).
  int rounds() const;
  int switches() const;

 private:
  struct Call {
    std::size_t size_class = 0;
    bool once = false;
    std::uint64_t serial = 0;
    std::size_t slot = 0;  // of RankRecord::call_times
    bool timed = false;
    std::uint64_t bytes = 0;
  };
  PlanLearner& learner(std::size_t size_class, bool once);
  int total(int (PlanLearner::*count)() const) const;  // over the classes' learners
  // The slowest rank's time of `call`, if every rank left it.
  std::optional<std::chrono::nanoseconds> slowest(const Call& call) const;

  std::uint64_t* words_;
  std::span<RankRecord> ranks_;
  int local_rank_;
  bool enabled_;
  PlanLearning policy_;
  std::array<std::optional<PlanLearner>, kCopyChoiceWords> learners_;
  std::uint64_t learned_calls_ = 0;
  std::optional<Call> current_;  // the call just chosen, if its path is learned
  std::optional<Call> pending_;  // rank 0: a timed call whose slowest time is not read yet
};

}  // namespace multilane::runtime::shm
