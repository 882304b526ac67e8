// runtime/shm/endpoint.hpp — one local rank's side of a group segment: it runs Steps.
//
// The executor-facing interface of the shared-memory layer. For each Step of a plan
// (runtime/shm/plan.hpp), in order:
//   startable(step)  never blocks: whether the step's wait is over (puts: the buffer's previous
//                    readers are done; reader syncs: every writer of the stage synced, or
//                    in flagged lines the writer stamped the lines the reader reads; the get
//                    that releases flagged lines: every writer synced);
//   wait(step)       blocks until it is: polls for a while, then sleeps on the futex, checking
//                    between sleeps that the group is not broken and that every rank's process
//                    is alive; throws ShmError on timeout, dead rank or broken group;
//   perform(step)    does it (copies, arrives at the sync word); never blocks, except a reader
//                    that finds another call's flags in flagged lines: it waits for `filled`
//                    to check the whole tag (and name both calls).
// run() is the three in a row. Any failure breaks the group (fail()): the reason goes into the
// segment and every rank's next wait throws ShmError naming the rank that failed and why.
//
// Every writer adds its call's fingerprint (call_record.hpp) and a count of 1 to the stage's
// `filled` tag with one atomic addition when it syncs (the last one, by the count, publishes),
// and every reader checks the sum after its wait: ranks that disagree on a call (collective,
// root, size, tuning, number of calls) fail with both calls named. The stage's last reader
// resets the tag before it releases the buffer.
//
// Not thread-safe: one thread per endpoint. The endpoint does not own the segment.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "runtime/shm/call_record.hpp"
#include "runtime/shm/flagged_lines.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/peer_regions.hpp"
#include "runtime/shm/step.hpp"
#include "runtime/shm/sync_word.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime::shm {

struct ShmBuffers {
  const std::byte* send = nullptr;  // puts and LocalCopy read here
  std::byte* recv = nullptr;        // gets and LocalCopy write here
};

// How this rank's single copies went (tests and benchmarks look).
struct DirectCopies {
  std::uint64_t mapped = 0;  // memcpy through a mapping of the other rank's SharedBuffer
  std::uint64_t kernel = 0;  // process_vm_readv / process_vm_writev
};

class ShmEndpoint {
 public:
  // `label` starts every error message, e.g. "shm group job 2a node 0, local rank 1".
  ShmEndpoint(SegmentView view, int local_rank, const WaitPolicy& policy, std::string label);

  int local_rank() const { return rank_; }
  int local_size() const { return static_cast<int>(view_.ranks.size()); }
  const WaitPolicy& policy() const { return policy_; }
  const std::string& label() const { return label_; }

  // Records the call this rank enters: other ranks check it, and errors name it.
  void enter_call(const CallInfo& call);
  const CallInfo& call() const { return call_; }

  bool startable(const Step& step) const {  // here, to be inlined: every step asks it
    if (waits_for_flags(step)) {
      return lines_stamped(lines_of(step), step.slot_offset, step.length, target_of(step));
    }
    return !waits_at_all(step) || has_reached(word_waited_on(step), target_of(step));
  }
  void wait(const Step& step);
  void perform(const Step& step, const ShmBuffers& buffers);
  const DirectCopies& direct_copies() const { return direct_copies_; }

  // Timing the copies of the current call (root_share.hpp). While on, every sync this rank
  // performs starts the clock, and stamp_copy_time() stores the time since then in the rank's
  // RankRecord::copy_time; the last direct copy of a stage does it itself before it releases
  // the stage, so that a rank waiting for the release finds the time there.
  void time_copies(bool on) { timing_copies_ = on; }
  void stamp_copy_time();

  void run(const Step& step, const ShmBuffers& buffers) {
    if (!startable(step)) wait(step);
    perform(step, buffers);
  }

  // Marks the group broken with `reason` (the first reason any rank gives wins) and wakes every
  // rank that sleeps on the segment.
  void break_group(const Failure& reason);
  // What break_group() does to the segment, without touching this endpoint's own state:
  // thread-safe, for another thread to stop the one running this endpoint (its next wait
  // throws ShmError).
  void interrupt(const Failure& reason);
  // break_group(), then throws ShmError of that kind.
  [[noreturn]] void fail(ErrorKind kind, const std::string& reason);
  // Throws ShmError if the group is broken (by any rank).
  void check_not_broken();
  // Throws ShmError naming the first rank whose process is gone without having left the group;
  // `waiting_for` says what this rank was doing. Rate-limited to one look per check interval
  // unless `now` is set.
  void check_ranks_alive(const std::string& waiting_for, bool now = false);
  // The look itself: the first such rank and its process, if any (rate-limited likewise). A
  // caller whose description costs an allocation makes it only for a dead rank.
  struct DeadRank {
    int rank = 0;
    pid_t pid = 0;
  };
  std::optional<DeadRank> dead_rank(bool now = false);
  // Fails naming local rank `rank` (process `pid`) as dead, unless the group broke already
  // (then its reason): check_ranks_alive(), and a single copy the kernel found no process for.
  [[noreturn]] void fail_dead(int rank, pid_t pid, const std::string& waiting_for);

  // This rank leaves the group. Normally (it has done all its steps) it is marked as gone for
  // good, so its process may exit without the others taking that for a crash. While an
  // exception propagates (it may not have done its part) it breaks the group instead, so the
  // others fail at once rather than at their timeout.
  void leave();

 private:
  // A stage's sync words hold 1 + the number of the last stage they reached.
  static std::uint32_t stage_value(std::uint64_t stage) {
    return static_cast<std::uint32_t>(stage + 1);
  }
  // Whether the step may have to wait: a put or writer into a reused buffer waits for its
  // previous stage's readers (`drained`); a reader sync, and a get that releases flagged lines,
  // for the stage's writers (`filled`).
  static bool waits_at_all(const Step& step) {
    if (waits_for_free_buffer(step)) return step.stage.reuses;
    return (is_sync(step.primitive) && step.role == SyncRole::Reader) ||
           releases_flagged_lines(step);
  }
  SyncWord& word_waited_on(const Step& step) const {
    SlotHeader& slot = view_.slots[step.stage.slot];
    return waits_for_free_buffer(step) ? slot.drained : slot.filled;
  }
  std::uint32_t target_of(const Step& step) const {
    return stage_value(waits_for_free_buffer(step) ? step.stage.previous : step.stage.index);
  }
  FlaggedLine* lines_of(const Step& step) const {
    return view_.lines.data() + std::size_t{step.stage.slot} * kFlaggedLinesPerSlot;
  }
  // Where a put or get copies to or from in shared memory (not FlaggedLines).
  std::byte* shared_bytes_of(const Step& step) const;
  // wait() on the step's sync word (`drained` or `filled`), with the group's checks.
  void wait_on_word(const Step& step);
  std::string describe_wait(const Step& step) const;
  std::string laggards() const;
  // What a writer adds to the stage's `filled` tag: its fingerprint above, 1 in the low 16 bits
  // (so the sum of n contributions counts n arrivals and carries n fingerprints).
  std::uint64_t contribution() const;
  void writer_arrives(const Step& step);
  void check_writers_call(const Step& step);
  // A reader sync in FlaggedLines: the lines' flags carry the writer's fingerprint bits, and
  // otherwise the whole tag decides, once the writer published `filled`.
  void check_flagged_call(const Step& step);
  void release(const Step& step);
  // DirectGet / DirectPut: the copy between this rank's buffer and the exposed one, with memcpy
  // when the exposed one lies in a SharedBuffer this rank can map, else through the kernel.
  void copy_direct(const Step& step, const ShmBuffers& buffers, const std::byte* entry_bytes);

  // What every call touches first, together (bench/shm_overhead, two_ranks_one_thread_cold).
  SegmentView view_;
  int rank_;
  bool broken_ = false;
  std::uint64_t fingerprint_ = 0;
  CallInfo call_;
  std::uint64_t digest_ = digest_but_serial(call_);  // of call_, but for its serial
  WaitPolicy policy_;
  std::int32_t pid_;  // written into this rank's Expose entries
  std::string label_;
  PeerRegions peer_regions_;
  DirectCopies direct_copies_;
  bool timing_copies_ = false;
  std::chrono::steady_clock::time_point copies_started_{};
  std::chrono::steady_clock::time_point next_liveness_check_{};
};

}  // namespace multilane::runtime::shm
