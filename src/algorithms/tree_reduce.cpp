#include "tree_reduce.hpp"

#include <algorithm>
#include <vector>

namespace multilane::algo {

std::uint64_t element_segment(std::uint64_t segment, std::uint64_t element_size) {
  return std::max(element_size, segment / element_size * element_size);
}

namespace {

// One segment of one part at one rank: where its subtree's reduction is once `ready` has
// completed, and the send that hands it to the parent (kNoOp at the tree's root).
struct ReducedSegment {
  Range held;
  OpIndex ready = kNoOp;
  OpIndex sent_up = kNoOp;
};

Range in_buffer(Buffer buffer, const Range& r) {
  return {buffer, r.offset, r.length};
}

// Segment k of one part at `rank` (segments below k already emitted, in order): copies the
// rank's own input into its accumulator, combines every child's, sends the result up.
// `accumulator` is where the rank combines; the segment is appended to `out`.
void reduce_segment(ScheduleBuilder& b, int rank, const TreePart& p, std::uint64_t segment,
                    std::uint64_t k, Buffer accumulator, std::vector<ReducedSegment>& out) {
  if (k >= segment_count(p.part.length, segment)) return;
  const auto children = p.tree->edges_from(rank);
  const TreeEdge* up = p.tree->edge_to(rank);
  const Range seg = segment_of(p.part, segment, k);
  ReducedSegment r;
  r.held = in_buffer(Buffer::Send, seg);
  if (!children.empty()) {
    r.held = in_buffer(accumulator, seg);
    r.ready = b.copy(r.held, in_buffer(Buffer::Send, seg));
    for (auto c = children.rbegin(); c != children.rend(); ++c) {
      r.ready = b.recv_reduce(c->to, r.held, c->lane, {r.ready});
    }
  }
  if (up) r.sent_up = b.send(up->from, r.held, up->lane, {r.ready});
  out.push_back(r);
}

// The result of one segment: from the parent (the root has it once reduced), to the children.
void broadcast_segment(ScheduleBuilder& b, int rank, const TreePart& p, const ReducedSegment& seg) {
  const TreeEdge* up = p.tree->edge_to(rank);
  const Range result = in_buffer(Buffer::Recv, seg.held);
  OpIndex have = seg.ready;
  if (up) {
    have = b.recv(up->from, result, up->lane, {seg.sent_up});
  } else if (seg.held.buffer != Buffer::Recv) {
    have = b.copy(result, seg.held);  // a root without children (p = 1)
  }
  for (const TreeEdge& child : p.tree->edges_from(rank))
    b.send(child.to, result, child.lane, {have});
}

// Rounds the down sweep trails the reduction by: twice the deepest tree, so that a segment's
// result is usually back at a rank before that rank's channel needs it.
std::uint64_t down_sweep_lag(std::span<const TreePart> parts) {
  int deepest = 0;
  for (const TreePart& p : parts) {
    const int n = p.tree->num_ranks();
    for (int r = 0; r < n; ++r) {
      int depth = 0;
      for (const TreeEdge* e = p.tree->edge_to(r); e; e = p.tree->edge_to(e->from)) ++depth;
      deepest = std::max(deepest, depth);
    }
  }
  return 2 * static_cast<std::uint64_t>(deepest);
}

}  // namespace

Schedule tree_reduce_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                              std::uint32_t element_size, std::uint64_t segment,
                              std::span<const TreePart> parts) {
  ScheduleBuilder builder(Collective::Reduce, std::move(algorithm), num_ranks, root, size, segment);
  builder.set_element_size(element_size);
  for (int r = 0; r < num_ranks; ++r) {
    builder.start_rank(r);
    const Buffer accumulator = r == root ? Buffer::Recv : Buffer::Scratch;
    bool inner = false;
    for (const TreePart& p : parts) {
      std::vector<ReducedSegment> reduced;
      for (std::uint64_t k = 0; k < segment_count(p.part.length, segment); ++k) {
        reduce_segment(builder, r, p, segment, k, accumulator, reduced);
      }
      inner = inner || !p.tree->edges_from(r).empty();
    }
    if (r == root && !inner) {
      // Alone (p = 1): the result is the root's own input.
      for (const TreePart& p : parts) builder.copy(in_buffer(Buffer::Recv, p.part), p.part);
    }
    if (r != root && inner) builder.need_scratch(size);
  }
  return builder.finish();
}

Schedule tree_allreduce_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                                 std::uint32_t element_size, std::uint64_t segment,
                                 std::span<const TreePart> parts) {
  ScheduleBuilder builder(Collective::Allreduce, std::move(algorithm), num_ranks, root, size,
                          segment);
  builder.set_element_size(element_size);
  std::uint64_t segments = 0;
  for (const TreePart& p : parts)
    segments = std::max(segments, segment_count(p.part.length, segment));
  const std::uint64_t lag = down_sweep_lag(parts);
  for (int r = 0; r < num_ranks; ++r) {
    builder.start_rank(r);
    std::vector<std::vector<ReducedSegment>> reduced(parts.size());
    // Round j: segment j up every tree, then segment j - lag down. A pair of ranks that is a
    // parent-child edge in one tree and child-parent in the other carries both sweeps on one
    // ordered channel (FIFO); the lag keeps the down sweep from holding up the reduction.
    for (std::uint64_t j = 0; j < segments + lag; ++j) {
      for (std::size_t t = 0; t < parts.size() && j < segments; ++t) {
        reduce_segment(builder, r, parts[t], segment, j, Buffer::Recv, reduced[t]);
      }
      if (j < lag) continue;
      for (std::size_t t = 0; t < parts.size(); ++t) {
        if (j - lag < reduced[t].size())
          broadcast_segment(builder, r, parts[t], reduced[t][j - lag]);
      }
    }
  }
  return builder.finish();
}

}  // namespace multilane::algo
