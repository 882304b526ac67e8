// bench/simgrid_transfers.hpp — the transfers of a schedule, matched by the schedule's rule.
//
// The k-th Send of rank a to rank b and the k-th Recv of rank b from rank a (program order) are
// one transfer; transfers of the same ordered pair form a FIFO channel, and `previous` links each
// to the one before it on its channel. Errors are the ones multilane's simulator gives for the
// same broken schedule (std::invalid_argument): a peer out of range, a receive without a send, a
// send without a receive, matched lengths or lanes that differ.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::simgrid_peer {

inline constexpr std::uint32_t kNoTransfer = 0xffffffffu;

struct Transfers {
  std::vector<std::uint32_t> send_op;  // per transfer: global index of its Send in Schedule::ops
  std::vector<std::uint32_t> recv_op;  // per transfer: global index of its Recv
  std::vector<std::uint32_t>
      previous;                      // per transfer: the one before it on its pair, or kNoTransfer
  std::vector<std::uint32_t> of_op;  // per op: its transfer, or kNoTransfer (copies)
  std::vector<std::int32_t> rank_of_op;  // per op: the rank whose program holds it

  std::size_t size() const { return send_op.size(); }
};

Transfers match_transfers(const Schedule& schedule);

}  // namespace multilane::simgrid_peer
