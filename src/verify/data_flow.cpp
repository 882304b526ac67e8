#include "verify/data_flow.hpp"

#include <fmt/format.h>

#include "multilane/collective.hpp"
#include "schedule/group_call.hpp"
#include "verify/matching.hpp"

namespace multilane::verify {

namespace {
constexpr Buffer kBuffers[kNumBuffers] = {Buffer::Send, Buffer::Recv, Buffer::Scratch};
}

DataFlow::DataFlow(const Schedule& schedule, ErrorSink& sink) : s_(schedule), sink_(sink) {
  const int p = s_.num_ranks();
  maps_.reserve(static_cast<std::size_t>(p) * kNumBuffers);
  const Buffer input = input_buffer(s_.collective);
  for (int r = 0; r < p; ++r) {
    const bool holds_input = has_input(s_.collective, r, s_.root);
    for (const Buffer b : kBuffers) {
      const Origin initial = holds_input && b == input ? Origin{r, 0} : Origin{};
      maps_.emplace_back(buffer_bytes(s_, r, b), initial);
    }
  }
}

void DataFlow::read(std::uint32_t g, int rank, const Range& range) {
  pieces_.clear();
  bool reported = false;
  map(rank, range.buffer)
      .for_each(range.offset, range.end(), [&](std::uint64_t b, std::uint64_t e, Origin o) {
        if (o.rank == Origin::kUnwritten) {
          if (!reported) {
            sink_.add(fmt::format("{} reads {} before it is written", describe_global_op(s_, g),
                                  describe_range(range.buffer, b, e)));
            reported = true;
          }
          o.rank = Origin::kStale;
        }
        pieces_.push_back({b - range.offset, e - range.offset, o});
      });
}

void DataFlow::write(int rank, const Range& range) {
  ContentMap& m = map(rank, range.buffer);
  for (const Piece& piece : pieces_) {
    m.assign(range.offset + piece.begin, range.offset + piece.end, piece.origin);
  }
}

void DataFlow::on_copy(std::uint32_t op) {
  const int rank = rank_of_op(s_, op);
  read(op, rank, s_.ops[op].source);
  write(rank, s_.ops[op].range);
}

void DataFlow::on_transfer(const Transfer& t) {
  const Op& send = s_.ops[t.send];
  read(t.send, s_.ops[t.recv].peer, send.range);
  write(send.peer, s_.ops[t.recv].range);
}

void DataFlow::on_group_call(const GroupCall& call) {
  const OpKind kind = s_.ops[call.ops[0]].kind;
  const auto members = static_cast<int>(call.ops.size());
  for (const GroupMove& move : group_moves(kind, call.root, members, call.block)) {
    const std::uint32_t from = call.ops[move.from];
    const std::uint32_t to = call.ops[move.to];
    const Range& source = s_.ops[from].source;
    const Range& range = s_.ops[to].range;
    read(from, rank_of_op(s_, from),
         {source.buffer, source.offset + move.from_offset, move.length});
    write(rank_of_op(s_, to), {range.buffer, range.offset + move.to_offset, move.length});
  }
}

void DataFlow::check_results() {
  for (int r = 0; r < s_.num_ranks() && !sink_.full(); ++r) check_rank_result(r);
}

void DataFlow::check_rank_result(int rank) {
  const ContentMap& recv = map(rank, Buffer::Recv);
  const auto expected = expected_result(s_.collective, rank, s_.num_ranks(), s_.root, s_.size);
  for (const ExpectedPiece& want : expected) {
    std::string problem;
    recv.for_each(
        want.offset, want.offset + want.length,
        [&](std::uint64_t b, std::uint64_t e, const Origin& o) {
          if (!problem.empty()) return;
          const std::uint64_t want_offset = want.origin_offset + (b - want.offset);
          const std::string where = describe_range(Buffer::Recv, b, e);
          if (o.rank == Origin::kUnwritten) {
            problem = fmt::format("{} was never written", where);
          } else if (o.rank == Origin::kStale) {
            problem = fmt::format("{} holds bytes that were read before being written", where);
          } else if (o.rank != want.origin_rank || o.offset != want_offset) {
            problem = fmt::format(
                "{} holds rank {} input[{},{}) but should hold rank {} input[{},{})", where, o.rank,
                o.offset, o.offset + (e - b), want.origin_rank, want_offset, want_offset + (e - b));
          }
        });
    if (!problem.empty()) {
      sink_.add(fmt::format("rank {} ends with wrong bytes: {}", rank, problem));
      return;
    }
  }
}

}  // namespace multilane::verify
