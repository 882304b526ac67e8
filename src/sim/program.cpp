#include "sim/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace multilane::sim {

namespace {

constexpr std::uint32_t kUnset = 0xffffffffu;

// Channels of each sender, as rows of (receiver, channel id) sorted by receiver.
struct Channels {
  BigVector<std::uint32_t> begin;  // per sender rank
  BigVector<std::uint32_t> peer;
  BigVector<std::uint32_t> id;
  BigVector<std::uint32_t> sends;  // per channel id: number of sends

  std::uint32_t find(int sender, int receiver) const {
    auto first = peer.begin() + begin[sender];
    auto last = peer.begin() + begin[sender + 1];
    auto it = std::lower_bound(first, last, static_cast<std::uint32_t>(receiver));
    if (it == last || *it != static_cast<std::uint32_t>(receiver)) return kUnset;
    return id[static_cast<std::size_t>(it - peer.begin())];
  }
};

// First pass over the schedule: per op its dependency count (and the rank of a copy, or the
// channel of a send), per op the number of its dependents (in p.ops[op + 1].dep_begin, summed
// up by the caller), and the channels of every sender.
Channels count_pass(const Schedule& s, Program& p) {
  const int nranks = s.num_ranks();
  p.ops.assign(s.ops.size() + 1, OpState{});
  Channels c;
  c.begin.assign(static_cast<std::size_t>(nranks) + 1, 0);
  // channel_to[peer] is the current sender's channel to peer, valid when stamp[peer] == sender:
  // O(1) per send however many peers a rank has.
  BigVector<std::uint32_t> channel_to(static_cast<std::size_t>(nranks));
  BigVector<std::int32_t> stamp(static_cast<std::size_t>(nranks), -1);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> row;  // (receiver, channel)
  for (int r = 0; r < nranks; ++r) {
    row.clear();
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      p.ops[g].waiting = op.deps_count;
      for (OpIndex d : s.deps_of(op)) ++p.ops[base + d + 1].dep_begin;
      if (op.kind == OpKind::Copy || op.kind == OpKind::Reduce) {
        p.ops[g].link = kCopyOp | static_cast<std::uint32_t>(r);
        ++p.copies;
      }
      if (op.kind != OpKind::Send) continue;
      if (op.peer < 0 || op.peer >= nranks) {
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
      p.ops[g].link = channel_to[peer];  // the second pass replaces it by the transfer
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

// The two ends of transfer t seen so far agree on the length; the Send's lane wins unless it
// is kAnyLane. Returns false on a length mismatch.
bool merge_end(Transfer& tr, const Op& op, bool other_end_seen) {
  const bool send = op.kind == OpKind::Send;
  if (!other_end_seen) {
    tr.bytes = op.range.length;
    tr.lane = op.lane;
    return true;
  }
  if (send ? op.lane != kAnyLane : tr.lane == kAnyLane) tr.lane = op.lane;
  return tr.bytes == op.range.length;
}

}  // namespace

Program prepare_program(const Schedule& s) {
  Program p;
  const Channels ch = count_pass(s, p);
  const std::size_t n = s.ops.size();
  for (std::size_t g = 0; g < n; ++g) p.ops[g + 1].dep_begin += p.ops[g].dep_begin;
  p.dep_list.resize(p.ops[n].dep_begin);
  BigVector<std::uint32_t> fill(n);  // next free entry of each op's row of dependents
  for (std::size_t g = 0; g < n; ++g) fill[g] = p.ops[g].dep_begin;

  // Transfers channel by channel: channel c owns [first[c], first[c + 1]).
  const std::size_t nch = ch.sends.size();
  BigVector<std::uint32_t> first(nch + 1, 0);
  for (std::size_t i = 0; i < nch; ++i) first[i + 1] = first[i] + ch.sends[i];
  Transfer unmatched;
  unmatched.send_op = unmatched.recv_op = kUnset;
  p.transfers.assign(first[nch], unmatched);
  for (std::size_t i = 0; i < nch; ++i) {
    if (first[i + 1] > first[i]) p.transfers[first[i + 1] - 1].last_in_channel = 1;
  }

  // Second pass: rows of dependents, and the k-th Send of a to b matched with the k-th Recv of
  // b from a. A length mismatch is reported after the unmatched ends, for the first transfer.
  BigVector<std::uint32_t> next_send(first.begin(), first.end() - 1);
  BigVector<std::uint32_t> next_recv(first.begin(), first.end() - 1);
  std::uint32_t first_mismatch = kUnset;
  const int nranks = s.num_ranks();
  for (int r = 0; r < nranks; ++r) {
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      for (OpIndex d : s.deps_of(op)) p.dep_list[fill[base + d]++] = g;
      std::uint32_t t = kUnset;
      if (op.kind == OpKind::Send) {
        t = next_send[p.ops[g].link]++;
        p.transfers[t].send_op = g;
        p.transfers[t].from = r;
        p.transfers[t].to = op.peer;
      } else if (op.kind == OpKind::Recv) {
        if (op.peer < 0 || op.peer >= nranks) {
          throw std::invalid_argument(
              fmt::format("rank {} receives from rank {}, out of range", r, op.peer));
        }
        const std::uint32_t c = ch.find(op.peer, r);
        if (c == kUnset || next_recv[c] == first[c + 1]) {
          throw std::invalid_argument(fmt::format(
              "rank {} op {}: receive from rank {} has no matching send", r, g - base, op.peer));
        }
        t = next_recv[c]++;
        p.transfers[t].recv_op = g;
      } else {
        continue;
      }
      Transfer& tr = p.transfers[t];
      const bool both = tr.send_op != kUnset && tr.recv_op != kUnset;
      if (!merge_end(tr, op, both)) first_mismatch = std::min(first_mismatch, t);
      p.ops[g].link = t;
    }
  }
  for (std::size_t c = 0; c < nch; ++c) {
    if (next_recv[c] != first[c + 1]) {
      const Op& op = s.ops[p.transfers[next_recv[c]].send_op];
      throw std::invalid_argument(fmt::format(
          "a send to rank {} ({} bytes) has no matching receive", op.peer, op.range.length));
    }
  }
  if (first_mismatch != kUnset) {
    const Op& a = s.ops[p.transfers[first_mismatch].send_op];
    const Op& b = s.ops[p.transfers[first_mismatch].recv_op];
    throw std::invalid_argument(
        fmt::format("send to rank {} of {} bytes matches a receive from rank {} of {} bytes",
                    a.peer, a.range.length, b.peer, b.range.length));
  }
  return p;
}

}  // namespace multilane::sim
