// runtime/exec/group_job.hpp — a schedule's group op (GroupBcast ... GroupAlltoall: the ranks of
// one node through shared memory) as a call on the node's ShmGroup.
//
// The op's peer is the group call's root as a rank of the job; the group knows the ranks of the
// node by their place among the node's ranks in rank order (node_members()). The tuning table
// gives the buffer geometry per collective and block size, as `multilane tune shm` chose it.
#pragma once

#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "runtime/exec/call_memory.hpp"
#include "runtime/shm/group_runner.hpp"

namespace multilane::runtime {

inline constexpr const char* kNoGroupError =
    "the schedule has group operations but this rank has no shared-memory group";

// The ranks on `rank`'s node, in rank order: its shared-memory group.
std::vector<int> node_members(const Platform& platform, int rank);

// Runs the group call `op` of `rank` on `group`, in `memory`; `members`: node_members().
void run_group_op(const Op& op, int rank, std::span<const int> members, CallMemory& memory,
                  const shm::TuningTable& tuning, shm::ShmGroup& group);
// The same as a job for the group's runner thread (`memory` must outlive the job).
shm::GroupRunner::Job make_group_job(const Op& op, int rank, const std::vector<int>& members,
                                     CallMemory& memory, const shm::TuningTable& tuning);

}  // namespace multilane::runtime
