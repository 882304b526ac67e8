// tree.hpp — broadcast trees as data (who sends to whom, in which order, on which lane).
//
// A Tree spans all ranks of a collective and is rooted at the rank that holds the data.
// Every edge carries a phase: a rank serves its children phase by phase, starting phase j+1
// only when every send of phase j has completed (binomial trees and flat sequential trees
// put each child in its own phase; pipelined trees put all children in phase 0). Every edge
// also says how it uses lanes: Colored edges get a lane of their own from assign_lanes();
// Striped edges use all lanes (kAnyLane), right for a rank that sends one message at a time.
//
// Shapes are added over an `order` of ranks whose first element is the subtree's root.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::algo {

enum class EdgeLanes : std::uint8_t { Colored, Striped };

struct TreeEdge {
  int from = 0;
  int to = 0;
  int phase = 0;
  EdgeLanes lanes = EdgeLanes::Colored;
  int lane = kAnyLane;  // set by assign_lanes() for Colored edges
};

class Tree {
 public:
  Tree(int num_ranks, int root);

  // Appends an edge; a rank's children are served in the order their edges were added.
  void add_edge(int from, int to, int phase = 0, EdgeLanes lanes = EdgeLanes::Colored);
  // Builds the per-rank index; throws std::logic_error unless every rank but the root has
  // exactly one parent and every rank is reachable from the root.
  void finalize();

  int root() const { return root_; }
  int num_ranks() const { return num_ranks_; }
  // The edge into `rank`, or nullptr for the root.
  const TreeEdge* edge_to(int rank) const;
  // Edges out of `rank`, in sending order (phases non-decreasing).
  std::span<const TreeEdge> edges_from(int rank) const;
  std::vector<TreeEdge>& edges() { return edges_; }
  const std::vector<TreeEdge>& edges() const { return edges_; }

 private:
  int num_ranks_;
  int root_;
  std::vector<TreeEdge> edges_;           // sorted by `from` after finalize()
  std::vector<std::uint32_t> first_out_;  // CSR over edges_
  std::vector<std::uint32_t> in_edge_;    // index into edges_, or none
};

// order[0] -> order[1] -> ... (one child each).
void add_chain(Tree& tree, std::span<const int> order, int phase = 0);
// Heap-shaped binary tree: order[i] sends to order[2i+1] and order[2i+2], concurrently.
void add_binary_heap(Tree& tree, std::span<const int> order, int phase = 0);
// MPICH binomial tree over positions of `order`: position v sends to v+2^k for every 2^k
// below v's lowest set bit, largest subtree first, one child at a time (phase per child,
// starting at `first_phase`). Striped lanes.
void add_binomial(Tree& tree, std::span<const int> order, int first_phase = 0);
// order[0] sends to every other element, all at once. Striped lanes.
void add_flat(Tree& tree, std::span<const int> order, int phase = 0);

}  // namespace multilane::algo
