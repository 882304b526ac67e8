#include "verify/structure.hpp"

#include <fmt/format.h>

#include <string_view>

#include "multilane/collective.hpp"
#include "verify/access.hpp"

namespace multilane::verify {

namespace {

constexpr int kNumCollectives = static_cast<int>(std::size(kAllCollectives));

// The index arrays and global fields; operations cannot be looked at safely without them.
bool check_shape(const Schedule& s, const Platform& platform, ErrorSink& sink) {
  bool ok = true;
  const auto fail = [&](std::string message) {
    sink.add(std::move(message));
    ok = false;
  };
  if (static_cast<int>(s.collective) >= kNumCollectives) {
    fail(fmt::format("schedule names unknown collective {}", static_cast<int>(s.collective)));
  }
  if (s.rank_begin.empty()) {
    fail("schedule has no ranks (rank_begin is empty)");
    return false;
  }
  const int p = s.num_ranks();
  if (p != platform.num_ranks()) {
    fail(fmt::format("schedule has {} ranks but platform {} places {}", p, platform.name,
                     platform.num_ranks()));
  }
  if (s.root < 0 || s.root >= p) {
    fail(fmt::format("root {} is not a rank (ranks are 0..{})", s.root, p - 1));
  }
  if (s.rank_begin.front() != 0 || s.rank_begin.back() != s.ops.size()) {
    fail(fmt::format("rank_begin must run from 0 to the number of ops ({}) but runs from {} to {}",
                     s.ops.size(), s.rank_begin.front(), s.rank_begin.back()));
  }
  for (int r = 0; r < p; ++r) {
    if (s.rank_begin[r] > s.rank_begin[r + 1]) {
      fail(fmt::format("rank_begin decreases at rank {} ({} > {})", r, s.rank_begin[r],
                       s.rank_begin[r + 1]));
    }
  }
  if (s.element_size == 0) {
    fail("element size is 0: an element has at least one byte");
  } else if (is_reduction(s.collective) && s.size % s.element_size != 0) {
    fail(fmt::format("size {} is not a whole number of {}-byte elements", s.size, s.element_size));
  }
  if (s.scratch_bytes.size() != static_cast<std::size_t>(p)) {
    fail(fmt::format("scratch_bytes has {} entries for {} ranks", s.scratch_bytes.size(), p));
  }
  // The buffers' sizes come from the counts: without the right number, none can be checked.
  if (const auto error = counts_error(s.collective, p, s.counts)) {
    fail(*error);
  } else if (is_uneven(s.collective) && s.size != largest_count(s.counts)) {
    fail(fmt::format("size {} is not the largest count, {}", s.size, largest_count(s.counts)));
  }
  return ok;
}

class OpChecker {
 public:
  OpChecker(const Schedule& s, const Platform& platform, ErrorSink& sink)
      : s_(s), platform_(platform), sink_(sink) {}

  bool check_rank(int rank) {
    const auto program = s_.program(rank);
    for (OpIndex i = 0; i < program.size() && !sink_.full(); ++i) {
      rank_ = rank;
      index_ = i;
      op_ = &program[i];
      check_op();
    }
    return ok_;
  }

 private:
  void fail(std::string_view what) {
    sink_.add(fmt::format("{} {}", describe_op(rank_, index_, *op_), what));
    ok_ = false;
  }

  void check_op() {
    if (static_cast<int>(op_->kind) >= kNumOpKinds) {
      fail("has an unknown kind");
      return;
    }
    check_deps();
    if (op_->kind == OpKind::Copy || op_->kind == OpKind::Reduce) {
      check_copy();
    } else if (is_group_op(op_->kind)) {
      check_group_op();
    } else {
      check_peer();
      check_lane();
      check_range(op_->range, op_->kind == OpKind::Send   ? "reads"
                              : op_->kind == OpKind::Recv ? "writes"
                                                          : "combines into");
    }
    if (is_reduction(s_.collective)) check_whole_elements();
    if (const auto written = written_range(*op_); written && written->buffer == Buffer::Send) {
      fail(fmt::format("writes {}, but the send buffer is the caller's read-only input",
                       describe_range(*written)));
    }
  }

  void check_deps() {
    if (std::uint64_t{op_->deps_begin} + op_->deps_count > s_.deps.size()) {
      fail(fmt::format("lists dependencies [{},{}) beyond the {} entries of Schedule::deps",
                       op_->deps_begin, std::uint64_t{op_->deps_begin} + op_->deps_count,
                       s_.deps.size()));
      return;
    }
    for (const OpIndex d : s_.deps_of(*op_)) {
      if (d >= index_) {
        fail(fmt::format("depends on op #{}, which is not an earlier operation of rank {}", d,
                         rank_));
      }
    }
  }

  void check_peer() {
    const int p = s_.num_ranks();
    if (op_->peer < 0 || op_->peer >= p) {
      fail(fmt::format("names peer {} but ranks are 0..{}", op_->peer, p - 1));
    } else if (op_->peer == rank_) {
      fail(op_->kind == OpKind::Send ? "sends to itself" : "receives from itself");
    }
  }

  void check_lane() {
    const int lane = op_->lane;
    if (lane == kAnyLane || rank_ >= platform_.num_ranks()) return;
    const int lanes = platform_.lanes_of(rank_);
    if (lane < kAnyLane) {
      fail(fmt::format("uses lane {}, which is neither a lane index nor kAnyLane ({})", lane,
                       kAnyLane));
    } else if (lane >= lanes) {
      fail(fmt::format("uses lane {} but node {} has {} lane{} (0..{})", lane,
                       platform_.nodes[platform_.node_of(rank_)].name, lanes, lanes == 1 ? "" : "s",
                       lanes - 1));
    }
  }

  // True when the range lies inside its buffer.
  bool check_range(const Range& range, std::string_view verb) {
    if (static_cast<int>(range.buffer) >= kNumBuffers) {
      fail(fmt::format("{} unknown buffer {}", verb, static_cast<int>(range.buffer)));
      return false;
    }
    const std::uint64_t size = buffer_bytes(s_, rank_, range.buffer);
    if (range.length > size || range.offset > size - range.length) {
      fail(fmt::format("{} {} beyond the end of the {} buffer ({} bytes)", verb,
                       describe_range(range), to_string(range.buffer), size));
      return false;
    }
    return true;
  }

  // A Copy, or a Reduce (which combines `source` into `range`).
  void check_copy() {
    const Range& to = op_->range;
    const Range& from = op_->source;
    const bool combines = op_->kind == OpKind::Reduce;
    // Both ranges are checked, so that both problems are reported.
    const bool reads_inside = check_range(from, "reads");
    const bool writes_inside = check_range(to, combines ? "combines into" : "writes");
    if (!reads_inside || !writes_inside) return;
    const std::string_view verb = combines ? "combines" : "copies";
    if (to.length != from.length) {
      fail(fmt::format("{} {} ({} bytes) into {} ({} bytes): lengths differ", verb,
                       describe_range(from), from.length, describe_range(to), to.length));
    } else if (to.buffer == from.buffer && to.offset < from.end() && from.offset < to.end()) {
      fail(fmt::format("{} {} into {}: the ranges overlap", verb, describe_range(from),
                       describe_range(to)));
    }
  }

  // No range of a reduction splits an element: the executor combines whole elements only.
  void check_whole_elements() {
    const std::uint64_t e = s_.element_size;
    if (e <= 1) return;
    for (const Range* range : {&op_->range, &op_->source}) {
      if (range->length == 0) continue;
      if (range->offset % e != 0 || range->length % e != 0) {
        fail(fmt::format("touches {}, which is not a whole number of {}-byte elements",
                         describe_range(*range), e));
        return;
      }
    }
  }

  void check_group_op() {
    const int p = s_.num_ranks();
    const int root = op_->peer;
    if (root < 0 || root >= p) {
      fail(fmt::format("names group root {} but ranks are 0..{}", root, p - 1));
    } else if (rank_ < platform_.num_ranks() &&
               platform_.node_of(root) != platform_.node_of(rank_)) {
      fail(fmt::format("names group root rank {}, which is on node {}, not on this rank's node {}",
                       root, platform_.nodes[platform_.node_of(root)].name,
                       platform_.nodes[platform_.node_of(rank_)].name));
    }
    const Range& to = op_->range;
    const Range& from = op_->source;
    const bool reads_inside = check_range(from, "reads");  // both checked, both reported
    const bool writes_inside = check_range(to, "writes");
    if (reads_inside && writes_inside && to.buffer == from.buffer && to.offset < from.end() &&
        from.offset < to.end()) {
      fail(fmt::format("reads {} and writes {}: the ranges overlap", describe_range(from),
                       describe_range(to)));
    }
  }

  const Schedule& s_;
  const Platform& platform_;
  ErrorSink& sink_;
  int rank_ = 0;
  OpIndex index_ = 0;
  const Op* op_ = nullptr;
  bool ok_ = true;
};

}  // namespace

bool check_structure(const Schedule& schedule, const Platform& platform, ErrorSink& sink) {
  if (!check_shape(schedule, platform, sink)) return false;
  OpChecker checker(schedule, platform, sink);
  bool ok = true;
  for (int r = 0; r < schedule.num_ranks() && !sink.full(); ++r) ok = checker.check_rank(r) && ok;
  return ok;
}

}  // namespace multilane::verify
