// runtime/shm/call_policy.hpp — how one shared-memory call copies, decided in one place.
//
// Each group call makes two decisions: does it copy once (straight between the ranks' buffers
// through the kernel) or twice (through the pipeline buffers, the paper's Table 1), and, when
// it copies once and has a root, how much of the others' blocks the root copies itself. Five
// things have a say, and CallPolicy turns them into one CallDecision per call:
//
//   ShmGroup::prepare(arguments)                                            every rank
//     │
//     ├─ the same arguments as the last call? ── yes ──► the last call's decisions ┐
//     │  no                                                                         │
//     ▼                                                                             │
//   decide(): ShmGroup checks the buffers and gives the call's shape and geometry   │
//     ├─ CopyMode (the call's tuning) + SingleCopyLimits + can the kernel copy?     │
//     │      ──► by_limits: the path the limits give                                │
//     └─ CopyChooser::learns()  ──► learns: whether the path is learned instead     │
//     │                                                                             │
//     ▼ ◄───────────────────────────────────────────────────────────────────────────┘
//   next(serial):
//     ├─ learns ? CopyChooser::choose(by_limits) : by_limits ──► single copy or not
//     └─ single-copy rooted call ? RootShareBalancer::choose() ──► the root's share
//     │
//     ▼
//   plan_for(shape): PlanCache, or build_plan() ──► this rank's plan
//     │
//     ▼
//   ShmGroup runs the plan, timed if timed() (and the copies if times_copies())
//     │
//     ▼
//   finished(took, bytes) ──► CopyChooser and RootShareBalancer learn from the call
//
// Every rank takes the same decision for the same call without talking: the limits and the
// CopyMode are the same on every rank (the call's fingerprint, call_record.hpp, names a
// difference), and what is learned is read from versioned words in the segment that one rank
// writes (versioned_choice.hpp, with why that suffices).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "runtime/shm/copy_chooser.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/plan_cache.hpp"
#include "runtime/shm/root_share.hpp"
#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm {

// A collective call's arguments, as far as its checks and decisions depend on them.
struct CallArguments {
  Collective collective;
  int root;
  std::size_t send_size;
  std::size_t recv_size;
  ShmTuning tuning;
  friend bool operator==(const CallArguments&, const CallArguments&) = default;
};

// What a call of this group does: its shape, with the path and the root's share taken, and its
// geometry.
struct CallDecision {
  CallShape shape;
  Geometry geometry;
};

class CallPolicy {
 public:
  CallPolicy(const SegmentView& view, int local_rank, int local_size, const ShmOptions& options);

  // Whether every rank may copy from and to the others' memory (checked at setup).
  bool single_copy_allowed() const { return single_copy_allowed_; }
  // The limits in force (ShmOptions::single_copy or default_single_copy()).
  const SingleCopyLimits& limits() const { return limits_; }
  // Whether `call` copies once by the limits and `mode`: asked for (or, with CopyMode::Auto,
  // large enough) and possible.
  bool copies_once_by_limits(const CallShape& call, const Geometry& geometry, CopyMode mode) const;

  // Whether `arguments` are those of the last call decided: its checks and the decisions that
  // depend on the arguments alone then stand (the common case: a collective in a loop).
  bool repeats(const CallArguments& arguments) const { return arguments == last_arguments_; }
  // Decides what depends on the arguments alone, for a call whose arguments were checked:
  // `shape` and `geometry` as the arguments give them.
  void decide(const CallArguments& arguments, const CallShape& shape, const Geometry& geometry);
  // The decision for call `serial`, whose arguments were decided last; every rank calls it, in
  // call order.
  CallDecision next(std::uint64_t serial);
  // This rank's plan of a call (a barrier's too), valid until the next call.
  const ShmPlan& plan_for(const CallShape& shape, int local_rank, const Geometry& geometry,
                          StageClock& clock) {
    return plans_.plan_for(shape, local_rank, geometry, clock);
  }

  // Whether the call just decided is to be timed as a whole, and whether every rank's copying
  // is (ShmEndpoint::time_copies).
  bool timed() const { return chooser_.wants_timing() || shares_.wants_timing(); }
  bool times_copies() const { return shares_.wants_timing(); }
  // The call just decided ended after `took` (when timed()); `bytes`: its largest buffer.
  void finished(std::optional<std::chrono::nanoseconds> took, std::uint64_t bytes);

  // For reports and tests.
  std::uint64_t calls_copied_once() const { return calls_copied_once_; }
  int root_share_changes() const { return shares_.changes(); }
  std::uint16_t root_share_of(const CallShape& call, std::uint64_t serial) const {
    return shares_.share_of(call, serial);
  }

 private:
  // Whether `call` may copy once at all: allowed, and the stage's buffer has room for every
  // rank's exposed-buffer entry.
  bool can_copy_once(const CallShape& call, const Geometry& geometry) const;

  // What every call touches first, together (bench/shm_overhead: a call that comes back to a
  // cache other code has taken in between brings back fewer lines).
  std::optional<CallArguments> last_arguments_;
  CallShape shape_;      // of the last arguments; single_copy: the path by the limits
  Geometry geometry_;    // of the last arguments
  bool learns_ = false;  // whether the copy chooser decides the path instead of the limits
  std::uint64_t calls_copied_once_ = 0;
  bool single_copy_allowed_ = false;
  SingleCopyLimits limits_;
  CopyChooser chooser_;
  RootShareBalancer shares_;
  PlanCache plans_;
};

}  // namespace multilane::runtime::shm
