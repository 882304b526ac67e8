// runtime/api/local_call.hpp — a blocking collective call whose part on this rank never leaves the
// node, run on the calling thread.
//
// On a rank whose program holds only copies and group ops (every rank of a one-node job under
// hier-shm, the non-leaders of a multi-node one), the engine and the group runner's thread
// would only pass the work along: four thread hand-overs per call, about 100 us on this
// 2-core machine against 0.3 us for an 8-byte shared-memory bcast. run_local_call() runs such
// a program where it is called, in program order (dependencies always point backwards in a
// rank's program; a program where one does not is not run here).
#pragma once

#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "runtime/exec/call_memory.hpp"
#include "runtime/exec/schedule_run.hpp"
#include "runtime/shm/group_runner.hpp"

namespace multilane::runtime {

// Runs `rank`'s part of the call to its end when it is local and `groups` (which may be null
// when the program has no group op) is idle, in the caller's `scratch` (kept from call to call,
// so that a repeated call allocates nothing). Returns true with the outcome in `outcome` (a
// failure's text prefixed with the call's description as start_schedule_run() reports it);
// false when the call must go through start_schedule_run() instead (nothing was done). The
// caller must have no other collective call in flight, and must not have announced this one
// with GroupRunner::expect().
bool run_local_call(const Schedule& schedule, const RankPlan& plan, int rank, CallBuffers buffers,
                    const CallIdentity& identity, shm::GroupRunner* groups,
                    std::vector<std::byte>& scratch, Outcome& outcome);

}  // namespace multilane::runtime
