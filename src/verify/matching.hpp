// verify/matching.hpp — which Recv each Send meets (the matching rule of schedule.hpp).
//
// The k-th Send of rank a to rank b matches the k-th Recv of rank b from rank a. The two ends
// must agree on the length and on the lane (equal, or one of them kAnyLane; a lane one end
// names must exist on the other end's node too, since lane i is one network).
//
// Group ops (schedule.hpp) match per node: the k-th group op of every rank of a node form
// the node's k-th group call; they must be as many on every rank of the node and agree on kind,
// root and block (group_call.hpp).
//
// Operations are identified globally by their index into Schedule::ops.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "verify/report.hpp"

namespace multilane::verify {

inline constexpr std::uint32_t kNone = 0xffffffffu;

struct Transfer {
  std::uint32_t send = 0;  // global op index
  std::uint32_t recv = 0;
};

struct GroupCall {
  int node_group = 0;  // index into Matching::node_members
  int root = 0;        // member index of the root
  std::uint64_t block = 0;
  std::vector<std::uint32_t> ops;  // global op of each member
};

struct Matching {
  // Grouped by ordered pair; within a pair in delivery order (FIFO).
  std::vector<Transfer> transfers;
  // Pair i owns transfers [pair_begin[i], pair_begin[i+1]).
  std::vector<std::uint32_t> pair_begin;
  std::vector<std::uint32_t> pair_of_transfer;
  // Per global op: the transfer it takes part in, kNone for copies.
  std::vector<std::uint32_t> transfer_of_op;
  // Group calls, node by node and in call order within a node; node group n owns calls
  // [node_call_begin[n], node_call_begin[n+1]).
  std::vector<std::vector<int>> node_members;  // ranks of each node that has ranks
  std::vector<GroupCall> group_calls;
  std::vector<std::uint32_t> node_call_begin;
  // Per global op: the group call it takes part in, kNone for others.
  std::vector<std::uint32_t> group_call_of_op;
  // False when some message has no partner or the lengths differ: nothing can be executed.
  bool executable = false;
};

Matching match_messages(const Schedule& schedule, const Platform& platform, ErrorSink& sink);
// The group-call part of match_messages (group_calls.cpp).
void match_group_calls(const Schedule& schedule, const Platform& platform, ErrorSink& sink,
                       Matching& matching);

// The rank owning global op `g` (binary search over rank_begin).
int rank_of_op(const Schedule& schedule, std::uint32_t g);
// "rank 3 op #5 (send to rank 4)" for a global op index.
std::string describe_global_op(const Schedule& schedule, std::uint32_t g);

}  // namespace multilane::verify
