// tree_reduce.hpp — the one engine behind every tree-shaped reduction.
//
// A tree reduction is the tree broadcast (tree_broadcast.hpp) with every arrow reversed: each
// tree carries a part of the vector; segment by segment, a rank with children copies its own
// input into its accumulator, combines what every child sends (RecvReduce, the smallest
// subtree first, which finishes first in a binomial tree), and sends the result to its parent;
// a leaf sends its input straight from the Send buffer. Pipelining comes from the segments: a
// rank forwards segment k while its children are still sending segment k+1.
//
//        broadcast                     reduction (same tree, arrows reversed)
//          r                             r        r: x_r (+) [a] (+) [b]
//        /   \                         ^   ^
//       a     b                       a     b     a: x_a (+) x_c (+) x_d
//      / \                           ^ ^
//     c   d                         c   d
//
// Allreduce runs the reduction and then the broadcast down the same trees, per segment, so the
// root starts broadcasting segment k as soon as it has reduced it and the two sweeps overlap.
// Every rank ends with the root's bits.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "multilane/schedule.hpp"
#include "tree_broadcast.hpp"

namespace multilane::algo {

// Reduce along the trees to their common root, parts given as offsets into the vector. The
// root accumulates in Recv, other inner ranks in Scratch.
Schedule tree_reduce_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                              std::uint32_t element_size, std::uint64_t segment,
                              std::span<const TreePart> parts);

// Reduce, then broadcast down the same trees; every rank accumulates in Recv.
Schedule tree_allreduce_schedule(std::string algorithm, int num_ranks, int root, std::uint64_t size,
                                 std::uint32_t element_size, std::uint64_t segment,
                                 std::span<const TreePart> parts);

// The pipelining unit of a reduction: `segment` rounded down to whole elements, at least one.
std::uint64_t element_segment(std::uint64_t segment, std::uint64_t element_size);

}  // namespace multilane::algo
