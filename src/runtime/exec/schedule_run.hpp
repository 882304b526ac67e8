// runtime/exec/schedule_run.hpp — one rank's part of a collective call, executed on the engine.
//
// The rank's program (schedule.hpp) runs as a dataflow graph: every operation starts as soon as
// its dependencies completed — sends and receives through the engine, copies at once — so the
// pipelining written into the schedule happens for real. A RecvReduce receives into staging
// memory and combines every chunk as it lands (chunk_combiner.hpp); a Reduce combines at once.
// The k-th Send to a peer becomes
// message k of the call on that ordered pair (matching rule of schedule.hpp); a kAnyLane
// transfer is striped over every lane both nodes have, and transfers between sites use the
// WAN link class (more streams).
//
// The first failing operation fails the call: the engine abandons the call's other operations
// (no byte of the user's buffers is touched afterwards) and `done` gets the error prefixed with
// the call's description ("bcast #3 (binomial, root 0, 1048576 bytes): timed out ...").
// Group operations (the ranks of this node through shared memory) run on `groups`, a thread of
// their own, in program order (the caller announces them with GroupRunner::expect() in call
// order), or on the caller's thread when a blocking call drives the engine alone and has
// nothing else in flight (then nothing can wait on the engine meanwhile); a failed call cancels
// its remaining ones; a failure interrupts the one in flight and `done` waits for it to return.
// Everything else runs on the engine's driving thread; `done` is called exactly once, unless the
// engine ends first: it owns the run while the call runs (see Engine::begin_call) and then drops it
// with `done` uncalled.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"
#include "multilane/reduction.hpp"
#include "multilane/schedule.hpp"
#include "runtime/exec/call_memory.hpp"
#include "runtime/shm/group_runner.hpp"
#include "runtime/transport/engine.hpp"

namespace multilane::runtime {

struct CallIdentity {
  std::uint64_t sequence = 0;   // call number, from 1, the same on every rank
  std::uint64_t signature = 0;  // fingerprint of the call's arguments (call_signature())
  Reduction reduction;          // reductions: what RecvReduce and Reduce combine, and how
};

// "bcast #3 (binomial, root 0, 1048576 bytes)": the call in error messages, made only for them.
std::string describe_call(const Schedule& schedule, std::uint64_t sequence);

// What a run needs of `rank`'s program beyond the schedule (message numbers, dependencies,
// group order): the same for every call of the schedule, so made once per schedule.
struct RankPlan {
  // Per op: message k of the call on its ordered pair (sends and receives counted apart), or
  // a group op's place among the rank's group ops.
  std::vector<std::uint64_t> message;
  std::vector<std::uint32_t> waits_for;                // per op: how many ops it depends on
  std::vector<std::vector<std::uint32_t>> dependents;  // per op: the ops that depend on it
  std::vector<std::uint32_t> group_order;              // the group ops, in program order
  std::vector<int> node_members;                       // the ranks of this rank's node
  // Each rank's number in the job whose engine runs the call, when the schedule's ranks are
  // some of the job's or in another order (a communicator sharing the job); empty: the same.
  std::vector<int> job_ranks;
  int engine_peer(int peer) const {
    return job_ranks.empty() ? peer : job_ranks[static_cast<std::size_t>(peer)];
  }
};

std::shared_ptr<const RankPlan> plan_rank(const Schedule& schedule, const Platform& platform,
                                          int rank, std::span<const int> job_ranks = {});

// Starts the call on the engine's driving thread (call it there). `plan`: plan_rank() of the
// schedule for `rank`. `groups` may be null when the schedule has no group ops. `in_flight`, if
// given, is the caller's count of its calls not reported yet: the run decrements it just before
// it calls `done` (so `done`, a caller's completion, needs no wrapper of its own for that).
// `scratch`, if given, is where the call works (grown as needed; nobody else may use it until
// `done`), instead of scratch space of its own: a blocking caller's, reused call after call.
void start_schedule_run(Engine& engine, std::shared_ptr<const Schedule> schedule,
                        std::shared_ptr<const RankPlan> plan, const Platform& platform, int rank,
                        CallBuffers buffers, CallIdentity identity, Completion done,
                        shm::GroupRunner* groups = nullptr, std::atomic<int>* in_flight = nullptr,
                        std::vector<std::byte>* scratch = nullptr);

// How many group ops `rank` runs (a GroupRunner must expect() them before the call starts).
std::size_t group_op_count(const Schedule& schedule, int rank);

// Fingerprint of everything that must agree between ranks for a call to match: the schedule's
// shape and the parameters it was built with that it does not carry (the WAN pairs asked
// for), for a reduction also its element type and operation. The counts of a v-form count too,
// unless its algorithm reads only each rank's own counts (AlgorithmInfo::own_counts_only):
// ranks may then hold different counts vectors, and a block whose two ends disagree on its
// length fails as it arrives.
std::uint64_t call_signature(const Schedule& schedule, const BuildParams& params,
                             const Reduction& reduction = {});

}  // namespace multilane::runtime
