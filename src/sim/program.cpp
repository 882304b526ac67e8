#include "sim/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace multilane::sim {

namespace {

// Reverse dependencies: who waits for whom, as compressed rows.
void build_dependents(const Schedule& s, Program& p) {
  const std::size_t n = s.ops.size();
  p.ops.assign(n + 1, OpState{});
  for (int r = 0; r < s.num_ranks(); ++r) {
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      p.ops[g].waiting = op.deps_count;
      if (op.kind == OpKind::Copy) p.ops[g].link = kCopyOp | static_cast<std::uint32_t>(r);
      for (OpIndex d : s.deps_of(op)) ++p.ops[base + d + 1].dep_begin;
    }
  }
  for (std::size_t g = 0; g < n; ++g) p.ops[g + 1].dep_begin += p.ops[g].dep_begin;
  p.dep_list.resize(p.ops[n].dep_begin);
  std::vector<std::uint32_t> fill(n);
  for (std::size_t g = 0; g < n; ++g) fill[g] = p.ops[g].dep_begin;
  for (int r = 0; r < s.num_ranks(); ++r) {
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      for (OpIndex d : s.deps_of(s.ops[g])) p.dep_list[fill[base + d]++] = g;
    }
  }
}

// Channels of each sender, as rows of (receiver, channel id) sorted by receiver.
struct Channels {
  std::vector<std::uint32_t> begin;  // per sender rank
  std::vector<std::uint32_t> peer;
  std::vector<std::uint32_t> id;
  std::vector<std::uint32_t> sends;  // per channel id: number of sends

  std::uint32_t find(int sender, int receiver) const {
    auto first = peer.begin() + begin[sender];
    auto last = peer.begin() + begin[sender + 1];
    auto it = std::lower_bound(first, last, static_cast<std::uint32_t>(receiver));
    if (it == last || *it != static_cast<std::uint32_t>(receiver)) return 0xffffffffu;
    return id[static_cast<std::size_t>(it - peer.begin())];
  }
};

Channels build_channels(const Schedule& s) {
  Channels c;
  const int p = s.num_ranks();
  c.begin.assign(static_cast<std::size_t>(p) + 1, 0);
  // channel_to[peer] is the channel of the current sender to peer, valid when
  // stamp[peer] == sender: O(1) per send however many peers a rank has.
  std::vector<std::uint32_t> channel_to(static_cast<std::size_t>(p));
  std::vector<std::int32_t> stamp(static_cast<std::size_t>(p), -1);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> row;  // (receiver, channel)
  for (int r = 0; r < p; ++r) {
    row.clear();
    for (const Op& op : s.program(r)) {
      if (op.kind != OpKind::Send) continue;
      if (op.peer < 0 || op.peer >= p) {
        throw std::invalid_argument(
            fmt::format("rank {} sends to rank {}, out of range", r, op.peer));
      }
      const auto peer = static_cast<std::uint32_t>(op.peer);
      if (stamp[peer] != r) {
        stamp[peer] = r;
        channel_to[peer] = static_cast<std::uint32_t>(c.sends.size());
        row.emplace_back(peer, channel_to[peer]);
        c.sends.push_back(1);
      } else {
        ++c.sends[channel_to[peer]];
      }
    }
    std::sort(row.begin(), row.end());
    for (const auto& [peer, id] : row) {
      c.peer.push_back(peer);
      c.id.push_back(id);
    }
    c.begin[r + 1] = static_cast<std::uint32_t>(c.peer.size());
  }
  return c;
}

}  // namespace

Program prepare_program(const Schedule& s) {
  Program p;
  build_dependents(s, p);
  const Channels ch = build_channels(s);
  const std::size_t nch = ch.sends.size();
  std::vector<std::uint32_t> first(nch + 1, 0);
  for (std::size_t i = 0; i < nch; ++i) first[i + 1] = first[i] + ch.sends[i];
  const std::uint32_t transfers = first[nch];
  p.transfers.assign(transfers, Transfer{});
  for (std::size_t i = 0; i < nch; ++i) {
    if (first[i + 1] > first[i]) p.transfers[first[i + 1] - 1].last_in_channel = 1;
  }
  std::vector<std::uint32_t> next_send(first.begin(), first.end() - 1);
  std::vector<std::uint32_t> next_recv(first.begin(), first.end() - 1);
  const int nranks = s.num_ranks();
  for (int r = 0; r < nranks; ++r) {
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      if (op.kind == OpKind::Send) {
        const std::uint32_t c = ch.find(r, op.peer);
        const std::uint32_t t = next_send[c]++;
        Transfer& tr = p.transfers[t];
        tr.send_op = g;
        tr.bytes = op.range.length;
        tr.from = r;
        tr.to = op.peer;
        tr.lane = op.lane;
        p.ops[g].link = t;
      } else if (op.kind == OpKind::Recv) {
        if (op.peer < 0 || op.peer >= nranks) {
          throw std::invalid_argument(
              fmt::format("rank {} receives from rank {}, out of range", r, op.peer));
        }
        const std::uint32_t c = ch.find(op.peer, r);
        if (c == 0xffffffffu || next_recv[c] == first[c + 1]) {
          throw std::invalid_argument(
              fmt::format("rank {} op {}: receive from rank {} has no matching send", r,
                          g - s.rank_begin[r], op.peer));
        }
        const std::uint32_t t = next_recv[c]++;
        p.transfers[t].recv_op = g;
        p.ops[g].link = t;
      }
    }
  }
  for (std::size_t c = 0; c < nch; ++c) {
    if (next_recv[c] != first[c + 1]) {
      const Op& op = s.ops[p.transfers[next_recv[c]].send_op];
      throw std::invalid_argument(fmt::format(
          "a send to rank {} ({} bytes) has no matching receive", op.peer, op.range.length));
    }
  }
  for (Transfer& tr : p.transfers) {
    const Op& b = s.ops[tr.recv_op];
    if (tr.bytes != b.range.length) {
      throw std::invalid_argument(
          fmt::format("send to rank {} of {} bytes matches a receive from rank {} of {} bytes",
                      tr.to, tr.bytes, b.peer, b.range.length));
    }
    if (tr.lane == kAnyLane) tr.lane = b.lane;
  }
  return p;
}

}  // namespace multilane::sim
