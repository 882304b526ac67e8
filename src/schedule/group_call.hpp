// schedule/group_call.hpp — what a group call (the k-th group op of every rank of a node, see
// schedule.hpp) must look like, and which bytes it moves.
//
// Shared by every consumer of schedules (verify, sim, runtime), so that they agree on the
// meaning of a group op. Members are the ranks of one node in increasing rank order; `root` is
// the root's index among them (its local rank).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

// Bytes a member reads (`source`) and writes (`range`) in a group call of block `block`.
struct GroupLengths {
  std::uint64_t source = 0;
  std::uint64_t range = 0;
};
GroupLengths group_lengths(OpKind kind, bool is_root, int members, std::uint64_t block);

// The block of the call (the whole message for a bcast), from the root's op.
std::uint64_t group_block(OpKind kind, int members, const Op& root_op);

// Checks the members' ops of one call (ops[i] is member i's op): the same kind and root, and
// lengths that fit one block. Returns "" when they agree, else a sentence naming the first
// member that disagrees (by its position; the caller names ranks).
std::string group_call_problem(std::span<const Op* const> ops, int root);

// One piece of data a group call moves: member `from` reads its source at `from_offset`,
// member `to` writes its range at `to_offset` (offsets relative to the ranges' starts).
struct GroupMove {
  int from = 0;
  std::uint64_t from_offset = 0;
  int to = 0;
  std::uint64_t to_offset = 0;
  std::uint64_t length = 0;
};
// Every move of a call, none of zero length.
std::vector<GroupMove> group_moves(OpKind kind, int root, int members, std::uint64_t block);

}  // namespace multilane

namespace multilane {

// The same schedule with every group call replaced by its moves (group_moves) as plain
// operations: a move between two ranks becomes a Send and a Recv, a rank's move to itself a
// Copy; operations that depended on a group op depend on all of its replacements. For
// consumers that only know point-to-point operations (the simulator costs each move as an
// intra-node transfer). Throws std::invalid_argument when the group calls do not match.
Schedule lower_group_ops(const Schedule& schedule, const Platform& platform);
bool has_group_ops(const Schedule& schedule);

// The lowered schedule, and per operation of it whether it moves bytes of a group call that the
// runtime copies once (its block, a bcast's message, reaches the node's site's
// SharedMemory::single_copy_from): 1 for such Sends and Recvs, else 0.
struct LoweredGroupCalls {
  Schedule schedule;
  std::vector<std::uint8_t> copied_once;
};
LoweredGroupCalls lower_group_calls(const Schedule& schedule, const Platform& platform);

}  // namespace multilane
