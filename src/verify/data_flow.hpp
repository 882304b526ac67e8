// verify/data_flow.hpp — which input bytes every buffer holds, as the schedule executes.
//
// Each byte of each buffer of each rank is described by its origin: (contributors, offset)
// into their input buffers, "unwritten", or "stale" (bytes derived from an error already
// reported once, so not reported again downstream). The contributors are one rank for moved
// bytes, a set of ranks for reduced ones (contributors.hpp). Buffers are interval
// maps of origin runs, so a 130 MiB buffer written by a few transfers is a few runs.
//
// Initially every input buffer (collective.hpp input_buffer / has_input) holds its own bytes
// and everything else is unwritten. A transfer or copy moves the current origins of its source
// range into its destination range; a RecvReduce or a Reduce joins the source's contributors
// with the destination's, element offset by element offset, and reports a rank counted twice,
// a combination of different input offsets, or (for an operation that is not commutative)
// operands out of rank order. At the end, check_results() compares every Recv buffer with
// expected_result() of the collective, naming the contributions missing from a reduction.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"
#include "verify/access.hpp"
#include "verify/contributors.hpp"
#include "verify/execution.hpp"
#include "verify/interval_map.hpp"
#include "verify/report.hpp"

namespace multilane::verify {

struct Origin {
  static constexpr std::int32_t kUnwritten = -1;
  static constexpr std::int32_t kStale = -2;
  std::int32_t rank = kUnwritten;  // >= 0: whose input these bytes are (a ContributorSets id)
  std::uint64_t offset = 0;        // into that rank's input buffer
};

struct OriginTraits {
  static Origin shifted(const Origin& o, std::uint64_t delta) {
    return o.rank >= 0 ? Origin{o.rank, o.offset + delta} : o;
  }
  static bool continues(const Origin& left, std::uint64_t left_length, const Origin& right) {
    return left.rank == right.rank && (left.rank < 0 || left.offset + left_length == right.offset);
  }
};

class DataFlow : public ExecutionObserver {
 public:
  // `commutative`: whether the reduction's operation may take its operands in any order.
  DataFlow(const Schedule& schedule, ErrorSink& sink, bool commutative = true);

  void on_copy(std::uint32_t op) override;
  void on_transfer(const Transfer& transfer) override;
  void on_group_call(const GroupCall& call) override;

  // Reports, for every rank whose Recv buffer differs from the expected result, the first
  // run of wrong bytes.
  void check_results();

 private:
  using ContentMap = IntervalMap<Origin, OriginTraits>;
  struct Piece {
    std::uint64_t begin;  // offset relative to the start of the range read
    std::uint64_t end;
    Origin origin;
  };

  ContentMap& map(int rank, Buffer buffer) {
    return maps_[static_cast<std::size_t>(rank) * kNumBuffers + buffer_index(buffer)];
  }
  // Fills pieces_ with the content of `range` of the rank running global op `g`.
  void read(std::uint32_t g, int rank, const Range& range);
  void write(int rank, const Range& range);
  // Combines pieces_ (read by global op `g`) into `range` of `rank`.
  void combine(std::uint32_t g, int rank, const Range& range);
  Origin joined(std::uint32_t g, const Range& range, std::uint64_t begin, std::uint64_t end,
                const Origin& into, const Origin& from);
  void check_rank_result(int rank);
  std::string wrong_reduction(const Origin& found, std::uint64_t want_offset, std::uint64_t length,
                              int ranks);

  const Schedule& s_;
  ErrorSink& sink_;
  bool commutative_;
  ContributorSets contributors_;
  bool combine_reported_ = false;  // one report per kind of combining error is enough
  std::vector<Piece> combined_;    // scratch space of combine()
  std::vector<ContentMap> maps_;   // rank-major, kNumBuffers per rank
  std::vector<Piece> pieces_;      // scratch space of read()
};

}  // namespace multilane::verify
