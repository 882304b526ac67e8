#include "verify/matching.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace multilane::verify {

namespace {

// Messages of one ordered pair (sender, receiver), in program order: the unit of matching.
std::uint64_t pair_index(int sender, int receiver, int num_ranks) {
  return static_cast<std::uint64_t>(sender) * static_cast<std::uint64_t>(num_ranks) +
         static_cast<std::uint64_t>(receiver);
}

// Stable counting sort of global op indices by a key in [0, num_keys): O(n + num_keys).
template <class Key>
std::vector<std::uint32_t> stable_sort_by(const std::vector<std::uint32_t>& ops, int num_keys,
                                          Key key) {
  std::vector<std::uint32_t> start(static_cast<std::size_t>(num_keys) + 1, 0);
  for (const std::uint32_t g : ops) ++start[key(g) + 1];
  for (int k = 0; k < num_keys; ++k) start[k + 1] += start[k];
  std::vector<std::uint32_t> out(ops.size());
  for (const std::uint32_t g : ops) out[start[key(g)]++] = g;
  return out;
}

// Sends and receives, each sorted by (sender, receiver, program order).
struct SortedMessages {
  std::vector<std::uint32_t> sends;
  std::vector<std::uint32_t> recvs;
  std::vector<int> rank;  // per global op: its rank
};

SortedMessages sort_messages(const Schedule& s) {
  SortedMessages m;
  const int p = s.num_ranks();
  m.rank.resize(s.ops.size());
  for (int r = 0; r < p; ++r) {
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      m.rank[g] = r;
      if (s.ops[g].kind == OpKind::Send) m.sends.push_back(g);
      if (is_receive(s.ops[g].kind)) m.recvs.push_back(g);
    }
  }
  // Both lists are in (own rank, program order); radix-sort them by (sender, receiver).
  const auto peer = [&](std::uint32_t g) { return s.ops[g].peer; };
  const auto owner = [&](std::uint32_t g) { return m.rank[g]; };
  m.sends = stable_sort_by(stable_sort_by(m.sends, p, peer), p, owner);
  m.recvs = stable_sort_by(m.recvs, p, peer);
  return m;
}

std::string plural(std::size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

class Matcher {
 public:
  Matcher(const Schedule& s, const Platform& platform, ErrorSink& sink)
      : s_(s), platform_(platform), sink_(sink) {}

  Matching run() {
    const SortedMessages m = sort_messages(s_);
    const int p = s_.num_ranks();
    const auto send_pair = [&](std::uint32_t g) {
      return pair_index(m.rank[g], s_.ops[g].peer, p);
    };
    const auto recv_pair = [&](std::uint32_t g) {
      return pair_index(s_.ops[g].peer, m.rank[g], p);
    };
    out_.transfer_of_op.assign(s_.ops.size(), kNone);
    out_.executable = true;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < m.sends.size() || j < m.recvs.size()) {
      const std::uint64_t pair = std::min(i < m.sends.size() ? send_pair(m.sends[i]) : ~0ull,
                                          j < m.recvs.size() ? recv_pair(m.recvs[j]) : ~0ull);
      std::size_t i_end = i;
      while (i_end < m.sends.size() && send_pair(m.sends[i_end]) == pair) ++i_end;
      std::size_t j_end = j;
      while (j_end < m.recvs.size() && recv_pair(m.recvs[j_end]) == pair) ++j_end;
      match_pair(pair, m.sends, i, i_end, m.recvs, j, j_end);
      i = i_end;
      j = j_end;
    }
    out_.pair_begin.push_back(static_cast<std::uint32_t>(out_.transfers.size()));
    return std::move(out_);
  }

 private:
  void match_pair(std::uint64_t pair, const std::vector<std::uint32_t>& sends, std::size_t i0,
                  std::size_t i1, const std::vector<std::uint32_t>& recvs, std::size_t j0,
                  std::size_t j1) {
    const auto p = static_cast<std::uint64_t>(s_.num_ranks());
    const int sender = static_cast<int>(pair / p);
    const int receiver = static_cast<int>(pair % p);
    const std::size_t num_sends = i1 - i0;
    const std::size_t num_recvs = j1 - j0;
    if (num_sends != num_recvs) {
      report_count_mismatch(sender, receiver, sends, i0, num_sends, recvs, j0, num_recvs);
      out_.executable = false;
      return;
    }
    const auto pair_index = static_cast<std::uint32_t>(out_.pair_begin.size());
    out_.pair_begin.push_back(static_cast<std::uint32_t>(out_.transfers.size()));
    for (std::size_t k = 0; k < num_sends; ++k) {
      const Transfer t{sends[i0 + k], recvs[j0 + k]};
      check_transfer(t, k, sender, receiver);
      const auto index = static_cast<std::uint32_t>(out_.transfers.size());
      out_.transfer_of_op[t.send] = index;
      out_.transfer_of_op[t.recv] = index;
      out_.transfers.push_back(t);
      out_.pair_of_transfer.push_back(pair_index);
    }
  }

  void report_count_mismatch(int sender, int receiver, const std::vector<std::uint32_t>& sends,
                             std::size_t i0, std::size_t num_sends,
                             const std::vector<std::uint32_t>& recvs, std::size_t j0,
                             std::size_t num_recvs) {
    const std::size_t common = std::min(num_sends, num_recvs);
    const std::uint32_t g = num_sends > num_recvs ? sends[i0 + common] : recvs[j0 + common];
    const int owner = num_sends > num_recvs ? sender : receiver;
    const Op& op = s_.ops[g];
    sink_.add(fmt::format(
        "rank {} sends {} to rank {} but rank {} posts {} from rank {} (first unmatched: "
        "rank {} op #{} {} {})",
        sender, plural(num_sends, "message"), receiver, receiver, plural(num_recvs, "receive"),
        sender, owner, g - s_.rank_begin[owner], to_string(op.kind), describe_range(op.range)));
  }

  void check_transfer(const Transfer& t, std::size_t k, int sender, int receiver) {
    const Op& send = s_.ops[t.send];
    const Op& recv = s_.ops[t.recv];
    const std::string message =
        fmt::format("message #{} from rank {} to rank {}", k, sender, receiver);
    const auto local = [&](std::uint32_t g, int rank) { return g - s_.rank_begin[rank]; };
    if (send.range.length != recv.range.length) {
      sink_.add(fmt::format(
          "{}: rank {} op #{} sends {} ({} bytes) but rank {} op #{} receives "
          "into {} ({} bytes)",
          message, sender, local(t.send, sender), describe_range(send.range), send.range.length,
          receiver, local(t.recv, receiver), describe_range(recv.range), recv.range.length));
      out_.executable = false;
    }
    if (send.lane != kAnyLane && recv.lane != kAnyLane && send.lane != recv.lane) {
      sink_.add(fmt::format("{}: rank {} op #{} uses lane {} but rank {} op #{} uses lane {}",
                            message, sender, local(t.send, sender), send.lane, receiver,
                            local(t.recv, receiver), recv.lane));
    } else if (send.lane != recv.lane) {
      // One end left the lane open: the named lane must exist on the other end's node too.
      const bool sender_named = send.lane != kAnyLane;
      const int lane = sender_named ? send.lane : recv.lane;
      const int other = sender_named ? receiver : sender;
      const std::uint32_t other_op = sender_named ? t.recv : t.send;
      const int lanes = platform_.lanes_of(other);
      if (lane >= lanes) {
        sink_.add(fmt::format(
            "{}: rank {} op #{} uses lane {} but rank {} (op #{}, any lane) is on node {} with "
            "{} lane{} (0..{})",
            message, sender_named ? sender : receiver,
            sender_named ? local(t.send, sender) : local(t.recv, receiver), lane, other,
            local(other_op, other), platform_.nodes[platform_.node_of(other)].name, lanes,
            lanes == 1 ? "" : "s", lanes - 1));
      }
    }
  }

  const Schedule& s_;
  const Platform& platform_;
  ErrorSink& sink_;
  Matching out_;
};

}  // namespace

Matching match_messages(const Schedule& schedule, const Platform& platform, ErrorSink& sink) {
  Matching matching = Matcher(schedule, platform, sink).run();
  match_group_calls(schedule, platform, sink, matching);
  return matching;
}

int rank_of_op(const Schedule& schedule, std::uint32_t g) {
  const auto it = std::upper_bound(schedule.rank_begin.begin(), schedule.rank_begin.end(), g);
  return static_cast<int>(it - schedule.rank_begin.begin()) - 1;
}

std::string describe_global_op(const Schedule& schedule, std::uint32_t g) {
  const int rank = rank_of_op(schedule, g);
  return describe_op(rank, g - schedule.rank_begin[rank], schedule.ops[g]);
}

}  // namespace multilane::verify
