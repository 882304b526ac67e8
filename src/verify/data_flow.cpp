#include "verify/data_flow.hpp"

#include <fmt/format.h>

#include "multilane/collective.hpp"
#include "schedule/group_call.hpp"
#include "verify/matching.hpp"

namespace multilane::verify {

namespace {
constexpr Buffer kBuffers[kNumBuffers] = {Buffer::Send, Buffer::Recv, Buffer::Scratch};
}

DataFlow::DataFlow(const Schedule& schedule, ErrorSink& sink, bool commutative)
    : s_(schedule), sink_(sink), commutative_(commutative), contributors_(schedule.num_ranks()) {
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

void DataFlow::combine(std::uint32_t g, int rank, const Range& range) {
  combined_.clear();
  ContentMap& m = map(rank, range.buffer);
  for (const Piece& piece : pieces_) {
    const std::uint64_t begin = range.offset + piece.begin;
    m.for_each(begin, range.offset + piece.end, [&](std::uint64_t b, std::uint64_t e, Origin into) {
      const Origin from = OriginTraits::shifted(piece.origin, b - begin);
      combined_.push_back({b, e, joined(g, range, b, e, into, from)});
    });
  }
  for (const Piece& c : combined_) m.assign(c.begin, c.end, c.origin);
}

Origin DataFlow::joined(std::uint32_t g, const Range& range, std::uint64_t begin, std::uint64_t end,
                        const Origin& into, const Origin& from) {
  constexpr Origin stale{Origin::kStale, 0};
  const auto report = [&](std::string what) {
    if (combine_reported_) return;
    sink_.add(fmt::format("{} {}", describe_global_op(s_, g), what));
    combine_reported_ = true;
  };
  const std::string where = describe_range(range.buffer, begin, end);
  if (into.rank == Origin::kUnwritten) {
    report(fmt::format("combines into {} before it is written", where));
    return stale;
  }
  if (into.rank == Origin::kStale || from.rank == Origin::kStale) return stale;
  const std::uint64_t length = end - begin;
  if (into.offset != from.offset) {
    report(
        fmt::format("combines {} input[{},{}) into {}, which holds {} input[{},{}): different "
                    "elements",
                    contributors_.describe(from.rank), from.offset, from.offset + length, where,
                    contributors_.describe(into.rank), into.offset, into.offset + length));
    return stale;
  }
  const ContributorSets::Joined j = contributors_.join(into.rank, from.rank);
  if (j.twice >= 0) {
    report(fmt::format("counts rank {}'s input[{},{}) twice in {}", j.twice, from.offset,
                       from.offset + length, where));
    return stale;
  }
  if (!commutative_ && j.out_of_order) {
    report(
        fmt::format("combines {} (+) {} in {}: operands out of rank order, but the operation "
                    "is not commutative",
                    contributors_.describe(into.rank), contributors_.describe(from.rank), where));
  }
  return {j.id, into.offset};
}

void DataFlow::on_copy(std::uint32_t op) {
  const int rank = rank_of_op(s_, op);
  read(op, rank, s_.ops[op].source);
  if (s_.ops[op].kind == OpKind::Reduce) {
    combine(op, rank, s_.ops[op].range);
  } else {
    write(rank, s_.ops[op].range);
  }
}

void DataFlow::on_transfer(const Transfer& t) {
  const Op& send = s_.ops[t.send];
  const Op& recv = s_.ops[t.recv];
  read(t.send, recv.peer, send.range);
  if (recv.kind == OpKind::RecvReduce) {
    combine(t.recv, send.peer, recv.range);
  } else {
    write(send.peer, recv.range);
  }
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
  const auto expected =
      expected_result(s_.collective, rank, s_.num_ranks(), s_.root, s_.size, s_.counts);
  for (const ExpectedPiece& want : expected) {
    std::string problem;
    recv.for_each(
        want.offset, want.offset + want.length,
        [&](std::uint64_t b, std::uint64_t e, const Origin& o) {
          if (!problem.empty()) return;
          const std::uint64_t want_offset = want.origin_offset + (b - want.offset);
          const std::string where = describe_range(Buffer::Recv, b, e);
          const std::uint64_t length = e - b;
          if (o.rank == Origin::kUnwritten) {
            problem = fmt::format("{} was never written", where);
          } else if (o.rank == Origin::kStale) {
            problem = fmt::format("{} holds bytes that were read before being written", where);
          } else if (want.reduced) {
            const std::int32_t wanted = contributors_.first_ranks(want.reduced_ranks);
            if (o.rank != wanted || o.offset != want_offset) {
              problem = fmt::format("{} holds {}", where,
                                    wrong_reduction(o, want_offset, length, want.reduced_ranks));
            }
          } else if (o.rank != want.origin_rank || o.offset != want_offset) {
            problem =
                fmt::format("{} holds {} input[{},{}) but should hold rank {} input[{},{})", where,
                            contributors_.describe(o.rank), o.offset, o.offset + length,
                            want.origin_rank, want_offset, want_offset + length);
          }
        });
    if (!problem.empty()) {
      sink_.add(fmt::format("rank {} ends with wrong bytes: {}", rank, problem));
      return;
    }
  }
}

}  // namespace multilane::verify

namespace multilane::verify {

std::string DataFlow::wrong_reduction(const Origin& found, std::uint64_t want_offset,
                                      std::uint64_t length, int ranks) {
  const std::string what = fmt::format("{} input[{},{})", contributors_.describe(found.rank),
                                       found.offset, found.offset + length);
  const std::string whose = ranks == s_.num_ranks()
                                ? std::string("every rank")
                                : contributors_.describe(contributors_.first_ranks(ranks));
  if (found.offset != want_offset) {
    return fmt::format("{} but should hold the reduction of input[{},{}) of {}", what, want_offset,
                       want_offset + length, whose);
  }
  const std::string missing = contributors_.missing(found.rank, ranks);
  return fmt::format("the reduction of {} but should hold that of {} ({})", what, whose,
                     missing.empty() ? contributors_.beyond(found.rank, ranks) + " too many"
                                     : missing + " missing");
}

}  // namespace multilane::verify
