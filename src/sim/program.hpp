// sim/program.hpp — a schedule prepared for execution: reverse dependencies and matched
// transfers, in flat arrays indexed by global operation index (Schedule::ops) and by transfer.
//
// Transfers are numbered channel by channel (one channel per ordered pair of ranks, in order
// of first use by the sender), and within a channel in program order, so transfer t+1 is the
// successor of t on the same FIFO channel unless t is the last of its channel. Matching costs
// O(ops + deps + ranks) time and memory; no hashing, no per-op allocation.
//
// Everything the event loop needs about an operation or a transfer sits in one small record
// (OpState: 12 bytes, Transfer: 32 bytes), so the loop never reads the schedule's 64-byte Op
// of a Send or Recv: on a million ranks each random access is a cache miss, and one record is
// one miss where parallel arrays would be several.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"
#include "sim/huge_page_allocator.hpp"

namespace multilane::sim {

inline constexpr std::uint32_t kCopyOp = 0x80000000u;  // OpState::link of a Copy: kCopyOp | rank

struct OpState {
  std::uint32_t waiting = 0;    // dependencies not yet completed (kOpDone once completed)
  std::uint32_t dep_begin = 0;  // dependents: dep_list[dep_begin .. next op's dep_begin)
  std::uint32_t link = 0;       // Send/Recv: its transfer; Copy: kCopyOp | rank
};
inline constexpr std::uint32_t kOpDone = 0xffffffffu;

struct Transfer {
  std::uint64_t bytes = 0;
  std::uint32_t send_op = 0;
  std::uint32_t recv_op = 0;
  std::int32_t from = 0;             // sender rank
  std::int32_t to = 0;               // receiver rank
  std::int8_t lane = 0;              // the Send's lane, or the Recv's when the Send says kAnyLane
  std::uint8_t state = 0;            // engine flags (readiness of both ends, predecessor left)
  std::uint8_t last_in_channel = 0;  // 1 if no successor on its channel
  std::uint8_t copied_once = 0;      // a move of a group call the runtime copies once
};

struct Program {
  BigVector<OpState> ops;  // per op, plus a sentinel whose dep_begin ends the last row
  BigVector<std::uint32_t> dep_list;
  BigVector<Transfer> transfers;
  std::size_t copies = 0;  // Copy operations
};

// Throws std::invalid_argument when a Send has no matching Recv (or vice versa), when matched
// lengths differ, or when a peer is out of range.
Program prepare_program(const Schedule& schedule);

}  // namespace multilane::sim
