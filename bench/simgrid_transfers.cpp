#include "simgrid_transfers.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_map>

namespace multilane::simgrid_peer {

namespace {

struct Channel {
  std::vector<std::uint32_t> sends;  // global op indices, program order
  std::size_t matched = 0;           // sends matched with a receive so far
  std::uint32_t last = kNoTransfer;  // latest transfer of the channel
};

std::uint64_t channel_key(int from, int to, int ranks) {
  return std::uint64_t(from) * std::uint64_t(ranks) + std::uint64_t(to);
}

}  // namespace

Transfers match_transfers(const Schedule& s) {
  const int ranks = s.num_ranks();
  Transfers t;
  t.of_op.assign(s.ops.size(), kNoTransfer);
  t.rank_of_op.assign(s.ops.size(), 0);
  std::unordered_map<std::uint64_t, Channel> channels;
  for (int r = 0; r < ranks; ++r) {
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      t.rank_of_op[g] = r;
      const Op& op = s.ops[g];
      if (op.kind != OpKind::Send) continue;
      if (op.peer < 0 || op.peer >= ranks) {
        throw std::invalid_argument(
            fmt::format("rank {} sends to rank {}, out of range", r, op.peer));
      }
      channels[channel_key(r, op.peer, ranks)].sends.push_back(g);
    }
  }
  for (int r = 0; r < ranks; ++r) {
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      if (op.kind != OpKind::Recv) continue;
      if (op.peer < 0 || op.peer >= ranks) {
        throw std::invalid_argument(
            fmt::format("rank {} receives from rank {}, out of range", r, op.peer));
      }
      auto it = channels.find(channel_key(op.peer, r, ranks));
      if (it == channels.end() || it->second.matched == it->second.sends.size()) {
        throw std::invalid_argument(
            fmt::format("rank {} op {}: receive from rank {} has no matching send", r,
                        g - s.rank_begin[r], op.peer));
      }
      Channel& c = it->second;
      const std::uint32_t send = c.sends[c.matched++];
      const Op& sent = s.ops[send];
      if (sent.range.length != op.range.length) {
        throw std::invalid_argument(
            fmt::format("send to rank {} of {} bytes matches a receive from rank {} of {} bytes",
                        sent.peer, sent.range.length, op.peer, op.range.length));
      }
      if (sent.lane != op.lane) {
        throw std::invalid_argument(
            fmt::format("send to rank {} on lane {} matches a receive from rank {} on lane {}",
                        sent.peer, int(sent.lane), op.peer, int(op.lane)));
      }
      const auto id = static_cast<std::uint32_t>(t.send_op.size());
      t.send_op.push_back(send);
      t.recv_op.push_back(g);
      t.previous.push_back(c.last);
      t.of_op[send] = id;
      t.of_op[g] = id;
      c.last = id;
    }
  }
  for (std::uint32_t g = 0; g < s.ops.size(); ++g) {  // the first unmatched send, in rank order
    const Op& op = s.ops[g];
    if (op.kind == OpKind::Send && t.of_op[g] == kNoTransfer) {
      throw std::invalid_argument(fmt::format(
          "a send to rank {} ({} bytes) has no matching receive", op.peer, op.range.length));
    }
  }
  return t;
}

}  // namespace multilane::simgrid_peer
