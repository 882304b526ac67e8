// hier_nodes.hpp — the nodes of a platform as seen by the two-level (SMP) algorithms.
//
// The SMP paper's two levels: the ranks of one node share memory and run group operations
// (schedule.hpp's Group* ops); one rank per node, its leader (the paper's group_comm), talks
// to the other nodes over the network. The leader of the root's node is the root, elsewhere
// the node's lowest rank. Members are listed in increasing rank order, so a member's index is
// its local rank in the node's group.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane::algo {

struct NodeGroup {
  int node = 0;              // index into Platform::nodes
  std::vector<int> members;  // increasing rank order
  int leader = 0;            // a member
  int local_of(int rank) const;
  int size() const { return static_cast<int>(members.size()); }
};

struct NodeGroups {
  std::vector<NodeGroup> groups;  // nodes with ranks, in node order
  std::vector<int> group_of;      // per rank: index into groups
  int root_group = 0;             // the group holding the root
  const NodeGroup& of(int rank) const { return groups[group_of[rank]]; }
};

NodeGroups node_groups(const Platform& platform, int root);

// The range of a group operation's side that a rank neither sends nor receives.
inline constexpr Range kNothing{Buffer::Recv, 0, 0};

// The members' blocks of `size` bytes as one range of `buffer` when the members are
// consecutive ranks (block u at u*size), else nothing.
std::optional<Range> consecutive_blocks(const NodeGroup& group, Buffer buffer, std::uint64_t size);

// Where the buffers of a sub-schedule (the leaders' part, built on leaders_platform()) land in
// the buffers of one rank of the two-level schedule: byte x of the sub-schedule's Send buffer is
// byte send.offset + x of send.buffer (x < send.length), and so on; its Scratch starts at
// scratch_offset in Scratch. `send_ready` are operations of the rank that fill what the
// sub-schedule's Send buffer stands for (e.g. packing copies): every replayed read of it waits
// for them.
struct SubPlacement {
  Range send;
  Range recv;
  std::uint64_t scratch_offset = 0;
  std::vector<OpIndex> send_ready;
};
// The sub-schedule's buffers are the rank's own buffers (a bcast between leaders).
SubPlacement same_buffers(std::uint64_t send_bytes, std::uint64_t recv_bytes);

// Replays `sub`'s program of `sub_rank` into the builder's current rank, after what it already
// holds, with sub-rank i standing for global rank `ranks[i]` and every range moved as `at`
// says. A copy that lands on its own source is dropped (the bytes are already in place; the
// root of a scatter whose blocks stay where they are). Asks for the scratch the sub-schedule
// needs. Returns operations that, once complete, mean every byte the sub-schedule writes on
// this rank is in place.
std::vector<OpIndex> replay_program(ScheduleBuilder& b, const Schedule& sub, int sub_rank,
                                    const std::vector<int>& ranks, const SubPlacement& at);

// The platform of the leaders alone: sub-rank i is groups[i]'s leader.
Platform leaders_platform(const Platform& platform, const NodeGroups& nodes);
std::vector<int> leader_ranks(const NodeGroups& nodes);

}  // namespace multilane::algo
