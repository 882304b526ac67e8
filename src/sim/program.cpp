#include "sim/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace multilane::sim {

namespace {

// Reverse dependencies: who waits for whom, as compressed rows.
void build_dependents(const Schedule& s, Program& p) {
  const std::size_t n = s.ops.size();
  p.dep_begin.assign(n + 1, 0);
  p.waiting.assign(n, 0);
  for (int r = 0; r < s.num_ranks(); ++r) {
    const std::uint32_t base = s.rank_begin[r];
    for (std::uint32_t g = base; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      p.waiting[g] = op.deps_count;
      for (OpIndex d : s.deps_of(op)) ++p.dep_begin[base + d + 1];
    }
  }
  for (std::size_t g = 0; g < n; ++g) p.dep_begin[g + 1] += p.dep_begin[g];
  p.dep_list.resize(p.dep_begin[n]);
  std::vector<std::uint32_t> fill(p.dep_begin.begin(), p.dep_begin.end() - 1);
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
  std::vector<std::pair<std::uint32_t, std::uint32_t>> row;  // (receiver, channel)
  for (int r = 0; r < p; ++r) {
    row.clear();
    for (const Op& op : s.program(r)) {
      if (op.kind != OpKind::Send) continue;
      if (op.peer < 0 || op.peer >= p) {
        throw std::invalid_argument(fmt::format("rank {} sends to rank {}, out of range", r, op.peer));
      }
      const auto peer = static_cast<std::uint32_t>(op.peer);
      auto it = std::find_if(row.begin(), row.end(), [&](const auto& e) { return e.first == peer; });
      if (it == row.end()) {
        row.emplace_back(peer, static_cast<std::uint32_t>(c.sends.size()));
        c.sends.push_back(1);
      } else {
        ++c.sends[it->second];
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
  p.send_op.assign(transfers, 0xffffffffu);
  p.recv_op.assign(transfers, 0xffffffffu);
  p.last_in_channel.assign(transfers, 0);
  for (std::size_t i = 0; i < nch; ++i) {
    if (first[i + 1] > first[i]) p.last_in_channel[first[i + 1] - 1] = 1;
  }
  p.transfer.assign(s.ops.size(), 0xffffffffu);
  std::vector<std::uint32_t> next_send(first.begin(), first.end() - 1);
  std::vector<std::uint32_t> next_recv(first.begin(), first.end() - 1);
  const int nranks = s.num_ranks();
  for (int r = 0; r < nranks; ++r) {
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      if (op.kind == OpKind::Send) {
        const std::uint32_t c = ch.find(r, op.peer);
        const std::uint32_t t = next_send[c]++;
        p.send_op[t] = g;
        p.transfer[g] = t;
      } else if (op.kind == OpKind::Recv) {
        if (op.peer < 0 || op.peer >= nranks) {
          throw std::invalid_argument(
              fmt::format("rank {} receives from rank {}, out of range", r, op.peer));
        }
        const std::uint32_t c = ch.find(op.peer, r);
        if (c == 0xffffffffu || next_recv[c] == first[c + 1]) {
          throw std::invalid_argument(fmt::format(
              "rank {} op {}: receive from rank {} has no matching send", r, g - s.rank_begin[r],
              op.peer));
        }
        const std::uint32_t t = next_recv[c]++;
        p.recv_op[t] = g;
        p.transfer[g] = t;
      }
    }
  }
  for (std::size_t c = 0; c < nch; ++c) {
    if (next_recv[c] != first[c + 1]) {
      const Op& op = s.ops[p.send_op[next_recv[c]]];
      throw std::invalid_argument(fmt::format(
          "a send to rank {} ({} bytes) has no matching receive", op.peer, op.range.length));
    }
  }
  for (std::uint32_t t = 0; t < transfers; ++t) {
    const Op& a = s.ops[p.send_op[t]];
    const Op& b = s.ops[p.recv_op[t]];
    if (a.range.length != b.range.length) {
      throw std::invalid_argument(fmt::format(
          "send to rank {} of {} bytes matches a receive from rank {} of {} bytes", a.peer,
          a.range.length, b.peer, b.range.length));
    }
  }
  return p;
}

}  // namespace multilane::sim
