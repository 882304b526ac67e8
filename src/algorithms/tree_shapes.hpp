// tree_shapes.hpp — the trees of the tree-shaped algorithms, shared by broadcast and reduction.
//
// A reduction along a tree is its broadcast with every arrow reversed and a combine at every
// inner rank (Sanders, Speck and Träff's two-tree paper treats both), so each shape is built
// once, here, and used by both: bcast_trees.cpp and bcast_multilane.cpp define the shapes and
// their broadcasts, tree_reduce.cpp their reductions.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/platform.hpp"
#include "tree.hpp"
#include "tree_broadcast.hpp"

namespace multilane::algo {

// Finalized, lane-assigned trees; tree i carries the i-th of trees.size() parts of the message.
struct TreeSet {
  std::vector<Tree> trees;
};

// Finalizes `trees` and gives their concurrent edges lanes (lane_coloring.hpp).
TreeSet finish_trees(const Platform& platform, std::vector<Tree> trees);

// Splits `size` bytes of `buffer` into one part per tree, each a whole number of
// `element_size`-byte elements, the first parts one element longer when they do not divide.
std::vector<TreePart> tree_parts(const TreeSet& set, Buffer buffer, std::uint64_t size,
                                 std::uint64_t element_size = 1);

TreeSet linear_trees(const Platform& platform, int root);
TreeSet chain_trees(const Platform& platform, int root);
TreeSet binary_trees(const Platform& platform, int root);
TreeSet binomial_trees(const Platform& platform, int root);
TreeSet site_binomial_trees(const Platform& platform, int root);
// NCCL's double binary tree: Sanders, Speck and Träff's two trees, every rank inner in at most
// one of them.
TreeSet dbtree_trees(const Platform& platform, int root);
// The broadcast paper's two lane-coloured trees over all ranks, and chained site by site.
TreeSet multilane_trees(const Platform& platform, int root);
TreeSet multilane_sites_trees(const Platform& platform, int root);

}  // namespace multilane::algo
