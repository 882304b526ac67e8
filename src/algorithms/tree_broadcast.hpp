// tree_broadcast.hpp — the one engine behind every tree-shaped broadcast.
//
// Linear, chain, binary, binomial, double binary tree, MagPIe's site tree and the multi-lane
// trees differ only in their trees; the schedule they produce is the same shape: each tree
// carries a byte range ("part") of the message; a rank receives its part from its parent
// segment by segment and forwards segment k to its children as soon as segment k has arrived
// (pipelining), serving children phase by phase (see tree.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "multilane/schedule.hpp"
#include "tree.hpp"

namespace multilane::algo {

struct TreePart {
  const Tree* tree;
  Range part;  // the bytes of the Recv buffer this tree broadcasts
};

// Appends `rank`'s program for broadcasting every part along its tree, cut into segments of
// `segment` bytes (segment >= part length: not pipelined). The rank must be the builder's
// current rank. All receives are posted first, then sends phase by phase.
void emit_tree_broadcast(ScheduleBuilder& builder, int rank, std::span<const TreePart> parts,
                         std::uint64_t segment);

// Builds a whole broadcast schedule from finalized, lane-assigned trees.
Schedule tree_broadcast_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                                 std::uint64_t segment, std::span<const TreePart> parts);

// Number of segments of `length` bytes cut every `segment` bytes, and the k-th of them.
std::uint64_t segment_count(std::uint64_t length, std::uint64_t segment);
Range segment_of(const Range& part, std::uint64_t segment, std::uint64_t k);

}  // namespace multilane::algo
