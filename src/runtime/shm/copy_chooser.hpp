// runtime/shm/copy_chooser.hpp — every rank of a group takes the same copy path for the same
// call, while one rank learns which path is faster.
//
//   bool once = chooser.learns(call, can_copy_once)                       // every rank
//                   ? chooser.choose(call, serial, by_limits) : (chooser.pass(), by_limits);
//   ...run the call, timed if chooser.wants_timing()...
//   chooser.finished(took_or_nullopt, bytes);                            // every rank
// (CallPolicy, call_policy.hpp, makes these calls for ShmGroup.)
//
// Which calls learn: alltoall and allgather with blocks of 4 KiB to 1 MiB, bcast and scatter
// with blocks of 4 to 64 KiB, that could copy either way (the kernel allows the single copy
// and the stage's buffer has room), when the group uses the default single-copy limits. Every
// other call copies as the limits say (`by_limits`). The class of a call is its collective
// and power-of-two block size. The class's *decider* runs one PlanLearner for it: local rank 0
// for alltoall and allgather, the call's root for bcast and scatter (each root learns the
// calls it roots).
//
// Why the ranks agree without talking: the path of a class is a versioned choice
// (versioned_choice.hpp), a word written by its decider only (alltoall and allgather: in the
// segment's header; bcast and scatter: in the root's RootRecord). It meets that file's two
// conditions so:
// 1. In call N every rank waits for something the decider wrote after the change (alltoall and
//    allgather: the decider's block; bcast and scatter: the root's stage, or its exposed
//    buffer).
// 2. A rank may be behind (a two-copy bcast or scatter lets the root run ahead by up to its
//    pipeline buffers), but the learner's every change follows a time of the slowest rank
//    (below) in a call on the path of the previous change, so every rank has finished such a
//    call.
//
// Why bcast and scatter learn and gather does not: which path is faster near the fixed limit
// (a 2-rank bcast of a few KiB, say) changes with the machine's state, so a fixed limit is
// wrong on some days. A gather's root could learn too, but in a two-copy gather no rank waits
// for anything the root writes, so a rank could enter call N + 1 without having seen the root's
// change.
//
// What is learned from: the time of the slowest rank, as the paper measures a collective (a
// two-copy pipeline can let the writer finish well before the others). While the decider's
// learner wants times it sets a bit in the class's word; every rank that sees it times the
// call and leaves the time in its RankRecord, in one of two places taken in turn by the
// learned calls. The decider reads them at the end of its next learned call, whoever decides
// that one: after an alltoall or allgather every rank has entered that call and so finished
// the timed one; a bcast's or scatter's root may be ahead, and a time missing there (a rank
// not done yet, or one that had not seen the bit) makes the learner wait for another call.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/plan_learner.hpp"
#include "runtime/shm/versioned_choice.hpp"

namespace multilane::runtime::shm {

// The two paths of a call, as PlanLearner's plans.
enum class CopyPath : bool { Twice, Once };
inline CopyPath path_of(bool once) {
  return once ? CopyPath::Once : CopyPath::Twice;
}

// A class's word, unpacked: 0 means "nothing learned yet" (the limits decide). `timing`: the
// decider wants the times of the calls.
struct CopyChoice : VersionedChoice<CopyPath> {
  bool timing = false;
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
  // limits give). The class's decider first publishes what its learner wants from the next
  // call on.
  bool choose(const CallShape& call, std::uint64_t serial, bool by_limits);
  // Call `serial` takes the path of the limits, unlearned.
  void pass() { current_.reset(); }
  // Whether the call just chosen should be timed.
  bool wants_timing() const;
  // The call just chosen ended; `took`: how long, if it was timed; `bytes`: its largest
  // buffer, so that times of calls of one class compare.
  void finished(std::optional<std::chrono::nanoseconds> took, std::uint64_t bytes);

  // Rounds this rank finished as a decider and how many switched a path, over all classes
  // (for tests).
  int rounds() const;
  int switches() const;

 private:
  struct Call {
    std::size_t size_class = 0;
    int decider = 0;
    CopyPath path = CopyPath::Twice;
    std::uint64_t serial = 0;
    std::size_t slot = 0;  // of RankRecord::call_times
    bool timed = false;
    std::uint64_t bytes = 0;
  };
  PlanLearner<CopyPath>& learner(std::size_t size_class, CopyPath path);
  // The word holding the path of `call`'s class.
  std::uint64_t& word(const CallShape& call, std::size_t size_class) const;
  int total(int (PlanLearner<CopyPath>::*count)() const) const;  // over the classes' learners
  // The slowest rank's time of `call`, if every rank left it.
  std::optional<std::chrono::nanoseconds> slowest(const Call& call) const;

  // Every call touches the first members (pass() at least); the learners come last, so that
  // a call that learns nothing brings one cache line of this object back, not a few.
  std::optional<Call> current_;  // the call just chosen, if its path is learned
  bool enabled_;
  int local_rank_;
  std::uint64_t learned_calls_ = 0;
  SegmentView view_;
  PlanLearning policy_;
  std::optional<Call> pending_;  // as decider: a timed call whose slowest time is not read yet
  std::array<std::optional<PlanLearner<CopyPath>>, kCopyChoiceWords + kRootedCopyChoiceWords>
      learners_;
};

}  // namespace multilane::runtime::shm
