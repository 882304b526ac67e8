// sim/program.hpp — a schedule prepared for execution: reverse dependencies and matched
// transfers, in flat arrays indexed by global operation index (Schedule::ops).
//
// Transfers are numbered channel by channel (one channel per ordered pair of ranks, in order
// of first use by the sender), and within a channel in program order, so transfer t+1 is the
// successor of t on the same FIFO channel unless t is the last of its channel. Matching costs
// O(ops + deps + ranks) time and memory; no hashing, no per-op allocation.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::sim {

struct Program {
  // dependents of op g: dep_list[dep_begin[g] .. dep_begin[g+1])
  std::vector<std::uint32_t> dep_begin;
  std::vector<std::uint32_t> dep_list;
  std::vector<std::uint32_t> waiting;   // per op: dependencies not yet completed
  std::vector<std::uint32_t> transfer;  // per Send/Recv op: its transfer
  std::vector<std::uint32_t> send_op;   // per transfer
  std::vector<std::uint32_t> recv_op;   // per transfer
  std::vector<std::uint8_t> last_in_channel;  // per transfer: 1 if no successor on its channel
};

// Throws std::invalid_argument when a Send has no matching Recv (or vice versa), when matched
// lengths differ, or when a peer is out of range.
Program prepare_program(const Schedule& schedule);

}  // namespace multilane::sim
