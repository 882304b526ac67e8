// runtime/shm/shm_group.hpp — the ranks of one node and their collectives over shared memory.
//
//   ShmGroup group(job_id, node_id, local_rank, local_size, options);
//   group.bcast(buffer, root);          group.scatter(send, recv, root);
//   group.gather(send, recv, root);     group.allgather(send, recv);
//   group.alltoall(send, recv);         group.barrier();
//
// Buffers are the caller's, with the MPI semantics of multilane/collective.hpp (bcast works in
// place; scatter's send and gather's receive buffer matter at the root only; send and receive
// buffers must not overlap). Every rank of the group must make the same calls in the same order
// with the same root, sizes and tuning, like MPI collectives.
//
// The constructor creates (local rank 0) or joins the node's segment and returns once every
// rank attached (runtime/shm/attach.hpp); the segment's name is gone from /dev/shm from then
// on, and the mapping goes with the last ShmGroup. Each call takes its decisions (copy once or
// twice, the root's share) from the group's CallPolicy (runtime/shm/call_policy.hpp, which
// draws the per-call pipeline), gets this rank's plan (runtime/shm/plan.hpp: the paper's
// Table 1, with its switch points) and runs it step by step (runtime/shm/endpoint.hpp).
//
// Errors: bad arguments throw multilane::UsageError; a timeout, a dead rank, disagreeing calls
// or a failure of another rank throw ShmError (a TransportError) naming the rank and the call.
// Either breaks the group for every rank: later calls throw again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "multilane/schedule.hpp"
#include "runtime/shm/endpoint.hpp"
#include "runtime/shm/plan.hpp"
#include "runtime/shm/plan_learner.hpp"
#include "runtime/shm/segment_name.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime::shm {

// How a call copies its bytes between ranks: as the group's SingleCopyLimits say (Auto),
// straight between the ranks' buffers with cross-memory attach (Once, where the kernel allows
// it), or through the pipeline buffers as in the paper's Table 1 (Twice). Which is faster at a
// given size depends on the machine: a kernel copy through process_vm_readv moves fewer bytes
// per second than a plain memcpy from another core's writes, and its system call and page
// pinning cost microseconds per call (the copy floors: docs/performance.md).
enum class CopyMode : std::uint8_t { Auto, Once, Twice };
std::string_view to_string(CopyMode mode);  // "auto", "once", "twice"
std::optional<CopyMode> parse_copy_mode(std::string_view text);

// The paper's two tuning parameters, per call, and how the call copies.
struct ShmTuning {
  // Defaults from bench/shm_bench on a 2-core Xeon VM (docs/performance.md): the paper's 16
  // buffers, and B = 32 KiB instead of its 8 KiB for today's larger caches.
  std::uint64_t buffer_size = 32 * 1024;  // B: one pipeline buffer, and the one-stage limit
  int pipeline_buffers = 16;              // buffers in the ring
  CopyMode copies = CopyMode::Auto;
  friend bool operator==(const ShmTuning&, const ShmTuning&) = default;
};

// Which calls copy once: scatter, allgather and alltoall with blocks of at least `from` bytes
// (0: none), bcast with a message of at least `bcast_from` bytes, gather with blocks of at
// least `gather_from` bytes.
struct SingleCopyLimits {
  std::uint64_t from = 0;
  std::uint64_t bcast_from = 0;
  std::uint64_t gather_from = 0;
  static SingleCopyLimits from_size(std::uint64_t size) { return {size, size, size}; }
  friend bool operator==(const SingleCopyLimits&, const SingleCopyLimits&) = default;
};

// From 8 KiB: below, a system call costs more than the second copy. When the group has more
// ranks than the machine has hardware threads, from 64 KiB (scatter, and where allgather and
// alltoall start learning), bcast from 1 MiB, gather from 32 KiB: every exposing rank must then
// wait, sharing a core, until its readers are done, while Table 1 lets a writer run ahead
// through its pipeline buffers; below these sizes that costs more than the second copy. A
// gather's root is the only rank that exposes and waits, and the others put their blocks
// straight into its buffer, which pays from 32 KiB (figures for 4 ranks on 2 cores:
// docs/shared-memory.md, "When a call copies once").
SingleCopyLimits default_single_copy(int local_size);

struct ShmOptions {
  std::uint32_t instance = 0;                 // tells apart several groups of one job on one node
  ShmTuning tuning;                           // used by calls that do not pass their own
  std::uint64_t capacity = 0;                 // bytes of the data area; 0: what `tuning` needs
  std::chrono::milliseconds timeout{60'000};  // every wait, including the setup
  std::chrono::milliseconds check_interval{20};  // liveness checks while sleeping
  // Polling before sleeping, and whether it yields the core (sched_yield) instead of pausing;
  // nullopt: default_polling().
  std::optional<std::chrono::nanoseconds> spin;
  std::optional<bool> yield_while_polling;
  // When calls copy once, straight between the ranks' buffers (plan.hpp's single copy) if the
  // kernel allows it; nullopt: default_single_copy(). Every rank must give the same limits.
  std::optional<SingleCopyLimits> single_copy;
  // With the default limits, alltoall and allgather calls of 4 KiB to 1 MiB per block, and
  // bcast and scatter calls of 4 to 64 KiB, with CopyMode::Auto learn which path is faster as
  // they run (runtime/shm/copy_chooser.hpp); false: the limits decide alone.
  // `copy_learning`: the pace (samples, rests, margin), of which the deciding rank's matters
  // (local rank 0 for alltoall and allgather, the root for bcast and scatter). Every rank must
  // give the same `learn_copy_path` (ranks that differ fail with both calls named, as with
  // different limits).
  // The first round waits for the 64th call of a kind: a program that makes fewer keeps the
  // limits' path rather than pay a round on the slower one.
  bool learn_copy_path = true;
  PlanLearning copy_learning{.first_rest = 64};
  // Single-copy bcast, scatter and gather: the root learns, as its calls run, how much of the
  // other ranks' blocks it should copy itself to finish with them (runtime/shm/root_share.hpp);
  // false: it keeps the default share. Ranks may differ: each decides for the calls it roots.
  bool learn_root_share = true;
};

class ShmStepwiseCall;

class ShmGroup {
 public:
  ShmGroup(std::uint64_t job_id, int node_id, int local_rank, int local_size,
           const ShmOptions& options = {});
  ShmGroup(ShmGroup&&) noexcept;
  ShmGroup& operator=(ShmGroup&&) noexcept;
  ~ShmGroup();

  int local_rank() const;
  int local_size() const;
  std::uint64_t capacity() const;  // bytes of the data area
  const SegmentName& segment_name() const;
  // Whether every rank may copy from and to the others' memory (checked at setup).
  bool single_copy_allowed() const;
  // The limits in force (ShmOptions::single_copy or the default for this group).
  const SingleCopyLimits& single_copy_limits() const;
  // Whether a call of `block_size` bytes per block (the whole message for bcast) with `tuning`
  // copies once by the limits (then the tuning's buffer size and depth hardly matter). Calls
  // that learn their path (ShmOptions::learn_copy_path) start there and may change.
  bool copies_once(Collective collective, std::uint64_t block_size, const ShmTuning& tuning) const;
  // How many of this rank's collective calls so far copied once (for reports and tests).
  std::uint64_t calls_copied_once() const;
  // How many times this rank changed the root's share of calls it roots (tests, reports).
  int root_share_changes() const;
  // The part of every other rank's block that the root of the next single-copy call of this
  // collective, block size and root would copy itself (root_share.hpp), 0..0.75; nullopt for a
  // call without a root's share (allgather, alltoall, one rank, 0 bytes). For reports.
  std::optional<double> root_share(Collective collective, std::uint64_t block_size, int root) const;
  // How many geometries (buffer size and depth) this rank's calls have used in turn. The first
  // call with a new geometry first waits until every buffer of the old one is drained, so a
  // measurement that changes geometry between its calls times that wait too (tests, tuning).
  std::uint64_t geometry_epochs() const;

  void barrier();
  void bcast(std::span<std::byte> buffer, int root, std::optional<ShmTuning> tuning = {});
  void scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root,
               std::optional<ShmTuning> tuning = {});
  void gather(std::span<const std::byte> send, std::span<std::byte> recv, int root,
              std::optional<ShmTuning> tuning = {});
  void allgather(std::span<const std::byte> send, std::span<std::byte> recv,
                 std::optional<ShmTuning> tuning = {});
  void alltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                std::optional<ShmTuning> tuning = {});
  // Any collective (bcast: `recv` is the buffer, `send` is ignored).
  void run(Collective collective, std::span<const std::byte> send, std::span<std::byte> recv,
           int root, std::optional<ShmTuning> tuning = {});

  // Makes this rank's waits end with ShmError(`reason`) (any thread; the group is broken).
  void interrupt(const Failure& reason);
  // What the single-copy paths of this rank's calls copied (tests, tuning).
  const DirectCopies& direct_copies() const;

  // Enters a call to be run step by step (ShmStepwiseCall), for an executor that interleaves
  // it with other work. The same checks and decisions as run().
  ShmStepwiseCall begin(Collective collective, std::span<const std::byte> send,
                        std::span<std::byte> recv, int root, std::optional<ShmTuning> tuning = {});

 private:
  friend class ShmStepwiseCall;

  // Checks the call, enters it and returns this rank's plan; run() and begin() run it and keep
  // the policy's books.
  const ShmPlan& prepare(Collective collective, std::span<const std::byte> send,
                         std::span<std::byte> recv, int root, std::optional<ShmTuning> tuning = {});
  ShmEndpoint& endpoint();

  struct State;
  std::unique_ptr<State> state_;
};

// One call run step by step: several ranks of one thread (bench/shm_overhead), or a rank that
// stops half-way (tests). Every step runs in order; finish() after the last keeps the books
// run() keeps (the policy learns from the time since begin()). A call left unfinished leaves
// the other ranks waiting until they time out, as a rank that dies would.
class ShmStepwiseCall {
 public:
  std::size_t steps() const { return plan_->steps.size(); }
  // Whether step `i` can start now, without waiting.
  bool startable(std::size_t i) const;
  // Step `i`, which must be startable.
  void perform(std::size_t i);
  // Step `i`, waiting (bounded by the group's timeout) until it can start.
  void run(std::size_t i);
  void finish();

 private:
  friend class ShmGroup;
  ShmStepwiseCall(ShmGroup& group, const ShmPlan& plan, ShmBuffers buffers, std::uint64_t bytes);

  ShmGroup* group_;
  const ShmPlan* plan_;
  ShmBuffers buffers_;
  std::uint64_t bytes_;
  std::chrono::steady_clock::time_point started_;
};

// The buffers a prepared plan's steps run with: bcast puts from, and gets into, its one buffer
// (`recv`); the others put from `send` and get into `recv`.
ShmBuffers step_buffers(Collective collective, std::span<const std::byte> send,
                        std::span<std::byte> recv);

// How a group's waiters poll when ShmOptions does not say: for 50 us, then they sleep. When
// `local_size` ranks outnumber the machine's hardware threads, they yield the core between two
// looks instead of pausing, so that the rank they wait for, which may share their core, runs
// at once (with more ranks than cores, a pausing poll or none at all makes small calls several
// times slower; docs/performance.md).
struct Polling {
  std::chrono::nanoseconds spin;
  bool yield = false;
};
Polling default_polling(int local_size);

}  // namespace multilane::runtime::shm
