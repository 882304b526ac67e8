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

// The reduction sweep of one part at `rank`; `accumulator` is where the rank combines.
std::vector<ReducedSegment> reduce_part(ScheduleBuilder& b, int rank, const TreePart& p,
                                        std::uint64_t segment, Buffer accumulator) {
  const auto children = p.tree->edges_from(rank);
  const TreeEdge* up = p.tree->edge_to(rank);
  const std::uint64_t n = segment_count(p.part.length, segment);
  std::vector<ReducedSegment> out(n);
  for (std::uint64_t k = 0; k < n; ++k) {
    const Range seg = segment_of(p.part, segment, k);
    ReducedSegment& r = out[k];
    r.held = in_buffer(Buffer::Send, seg);
    if (!children.empty()) {
      r.held = in_buffer(accumulator, seg);
      r.ready = b.copy(r.held, in_buffer(Buffer::Send, seg));
      for (auto c = children.rbegin(); c != children.rend(); ++c) {
        r.ready = b.recv_reduce(c->to, r.held, c->lane, {r.ready});
      }
    }
    if (up) r.sent_up = b.send(up->from, r.held, up->lane, {r.ready});
  }
  return out;
}

}  // namespace

Schedule tree_reduce_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                              std::uint32_t element_size, std::uint64_t segment,
                              std::span<const TreePart> parts) {
  ScheduleBuilder builder(Collective::Reduce, std::move(algorithm), num_ranks, root, size,
                          segment);
  builder.set_element_size(element_size);
  for (int r = 0; r < num_ranks; ++r) {
    builder.start_rank(r);
    const Buffer accumulator = r == root ? Buffer::Recv : Buffer::Scratch;
    bool inner = false;
    for (const TreePart& p : parts) {
      reduce_part(builder, r, p, segment, accumulator);
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
  for (int r = 0; r < num_ranks; ++r) {
    builder.start_rank(r);
    std::vector<std::vector<ReducedSegment>> reduced;
    for (const TreePart& p : parts) reduced.push_back(reduce_part(builder, r, p, segment, Buffer::Recv));
    for (std::size_t t = 0; t < parts.size(); ++t) {
      const TreePart& p = parts[t];
      const TreeEdge* up = p.tree->edge_to(r);
      for (std::uint64_t k = 0; k < reduced[t].size(); ++k) {
        const ReducedSegment& seg = reduced[t][k];
        const Range result = in_buffer(Buffer::Recv, seg.held);
        OpIndex have = seg.ready;
        if (up) {
          have = builder.recv(up->from, result, up->lane, {seg.sent_up});
        } else if (seg.held.buffer != Buffer::Recv) {
          have = builder.copy(result, seg.held);  // a root without children (p = 1)
        }
        for (const TreeEdge& child : p.tree->edges_from(r)) {
          builder.send(child.to, result, child.lane, {have});
        }
      }
    }
  }
  return builder.finish();
}

}  // namespace multilane::algo
