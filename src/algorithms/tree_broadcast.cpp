#include "tree_broadcast.hpp"

#include <algorithm>
#include <vector>
#include "support/ceil_div.hpp"

namespace multilane::algo {

std::uint64_t segment_count(std::uint64_t length, std::uint64_t segment) {
  return ceil_div(length, segment);
}

Range segment_of(const Range& part, std::uint64_t segment, std::uint64_t k) {
  const std::uint64_t offset = k * segment;
  return {part.buffer, part.offset + offset, std::min(segment, part.length - offset)};
}

namespace {

// The receives of one part: segment k arrives in op received[k] (none at the tree's root).
std::vector<OpIndex> post_receives(ScheduleBuilder& b, int rank, const TreePart& p,
                                   std::uint64_t segment) {
  const std::uint64_t n = segment_count(p.part.length, segment);
  std::vector<OpIndex> received(n, kNoOp);
  if (const TreeEdge* in = p.tree->edge_to(rank)) {
    for (std::uint64_t k = 0; k < n; ++k) {
      received[k] = b.recv(in->from, segment_of(p.part, segment, k), in->lane);
    }
  }
  return received;
}

// Forwards every segment to every child, phase by phase: the first send of a phase waits for
// the last sends of the previous phase (FIFO per pair orders the rest).
void forward_segments(ScheduleBuilder& b, int rank, const TreePart& p, std::uint64_t segment,
                      const std::vector<OpIndex>& received) {
  const auto children = p.tree->edges_from(rank);
  const std::uint64_t n = received.size();
  std::vector<OpIndex> previous_phase_ends;
  std::vector<OpIndex> this_phase_ends;
  std::vector<OpIndex> deps;
  for (std::size_t i = 0; i < children.size();) {
    const int phase = children[i].phase;
    std::size_t end = i;
    while (end < children.size() && children[end].phase == phase) ++end;
    this_phase_ends.clear();
    for (std::uint64_t k = 0; k < n; ++k) {
      for (std::size_t c = i; c < end; ++c) {
        deps.assign(1, received[k]);
        if (k == 0) deps.insert(deps.end(), previous_phase_ends.begin(), previous_phase_ends.end());
        const OpIndex sent =
            b.send(children[c].to, segment_of(p.part, segment, k), children[c].lane, deps);
        if (k + 1 == n) this_phase_ends.push_back(sent);
      }
    }
    previous_phase_ends.swap(this_phase_ends);
    i = end;
  }
}

}  // namespace

void emit_tree_broadcast(ScheduleBuilder& builder, int rank, std::span<const TreePart> parts,
                         std::uint64_t segment) {
  std::vector<std::vector<OpIndex>> received;
  received.reserve(parts.size());
  for (const auto& p : parts) received.push_back(post_receives(builder, rank, p, segment));
  for (std::size_t t = 0; t < parts.size(); ++t) {
    forward_segments(builder, rank, parts[t], segment, received[t]);
  }
}

Schedule tree_broadcast_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                                 std::uint64_t segment, std::span<const TreePart> parts) {
  ScheduleBuilder builder(Collective::Bcast, std::move(algorithm), num_ranks, root, size, segment);
  for (int r = 0; r < num_ranks; ++r) {
    builder.start_rank(r);
    emit_tree_broadcast(builder, r, parts, segment);
  }
  return builder.finish();
}

}  // namespace multilane::algo
