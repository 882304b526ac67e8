#include "verify/matching.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace multilane::verify {

namespace {

// Sorting (ordered pair, global index) keys groups messages by pair in program order.
std::uint64_t message_key(int sender, int receiver, int num_ranks, std::uint32_t g) {
  const std::uint64_t pair =
      static_cast<std::uint64_t>(sender) * static_cast<std::uint64_t>(num_ranks) +
      static_cast<std::uint64_t>(receiver);
  return (pair << 32) | g;
}
std::uint64_t pair_of_key(std::uint64_t key) { return key >> 32; }
std::uint32_t op_of_key(std::uint64_t key) { return static_cast<std::uint32_t>(key); }

struct SortedMessages {
  std::vector<std::uint64_t> sends;
  std::vector<std::uint64_t> recvs;
};

SortedMessages sort_messages(const Schedule& s) {
  SortedMessages m;
  const int p = s.num_ranks();
  for (int r = 0; r < p; ++r) {
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      const Op& op = s.ops[g];
      if (op.kind == OpKind::Send) m.sends.push_back(message_key(r, op.peer, p, g));
      if (op.kind == OpKind::Recv) m.recvs.push_back(message_key(op.peer, r, p, g));
    }
  }
  std::sort(m.sends.begin(), m.sends.end());
  std::sort(m.recvs.begin(), m.recvs.end());
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
    out_.transfer_of_op.assign(s_.ops.size(), kNone);
    out_.executable = true;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < m.sends.size() || j < m.recvs.size()) {
      const std::uint64_t pair = std::min(i < m.sends.size() ? pair_of_key(m.sends[i]) : ~0ull,
                                          j < m.recvs.size() ? pair_of_key(m.recvs[j]) : ~0ull);
      const std::size_t i_end = end_of_pair(m.sends, i, pair);
      const std::size_t j_end = end_of_pair(m.recvs, j, pair);
      match_pair(pair, m.sends, i, i_end, m.recvs, j, j_end);
      i = i_end;
      j = j_end;
    }
    out_.pair_begin.push_back(static_cast<std::uint32_t>(out_.transfers.size()));
    return std::move(out_);
  }

 private:
  static std::size_t end_of_pair(const std::vector<std::uint64_t>& keys, std::size_t from,
                                 std::uint64_t pair) {
    while (from < keys.size() && pair_of_key(keys[from]) == pair) ++from;
    return from;
  }

  void match_pair(std::uint64_t pair, const std::vector<std::uint64_t>& sends, std::size_t i0,
                  std::size_t i1, const std::vector<std::uint64_t>& recvs, std::size_t j0,
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
      const Transfer t{op_of_key(sends[i0 + k]), op_of_key(recvs[j0 + k])};
      check_transfer(t, k, sender, receiver);
      const auto index = static_cast<std::uint32_t>(out_.transfers.size());
      out_.transfer_of_op[t.send] = index;
      out_.transfer_of_op[t.recv] = index;
      out_.transfers.push_back(t);
      out_.pair_of_transfer.push_back(pair_index);
    }
  }

  void report_count_mismatch(int sender, int receiver, const std::vector<std::uint64_t>& sends,
                             std::size_t i0, std::size_t num_sends,
                             const std::vector<std::uint64_t>& recvs, std::size_t j0,
                             std::size_t num_recvs) {
    const std::size_t common = std::min(num_sends, num_recvs);
    const std::uint32_t g =
        num_sends > num_recvs ? op_of_key(sends[i0 + common]) : op_of_key(recvs[j0 + common]);
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
    const std::string message = fmt::format("message #{} from rank {} to rank {}", k, sender, receiver);
    const auto local = [&](std::uint32_t g, int rank) { return g - s_.rank_begin[rank]; };
    if (send.range.length != recv.range.length) {
      sink_.add(fmt::format("{}: rank {} op #{} sends {} ({} bytes) but rank {} op #{} receives "
                            "into {} ({} bytes)",
                            message, sender, local(t.send, sender), describe_range(send.range),
                            send.range.length, receiver, local(t.recv, receiver),
                            describe_range(recv.range), recv.range.length));
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
  return Matcher(schedule, platform, sink).run();
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
