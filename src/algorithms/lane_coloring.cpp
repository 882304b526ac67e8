// lane_coloring.cpp — a proper edge colouring of the nodes' sender/receiver graph, colour =
// lane.
//
// Example: the two trees of `multilane` for p = 8, one rank per node, two lanes per node
// (drawn in bcast_multilane.cpp). Every node sends at most two edges and receives exactly two
// (one per tree), so two colours suffice and no lane carries two edges of one node at once:
//
//   node   sends on lane 0   sends on lane 1   receives on lane 0   receives on lane 1
//    0      -> 5 (B)          -> 1 (A)          -                    -
//    1      -> 2 (A)          -> 3 (A)          <- 6 (B)             <- 0 (A)
//    2      -> 4 (A)          -                 <- 1 (A)             <- 6 (B)
//    3      -> 6 (A)          -> 5 (A)          <- 7 (B)             <- 1 (A)
//    4      -                 -> 7 (A)          <- 2 (A)             <- 7 (B)
//    5      -> 7 (B)          -> 6 (B)          <- 0 (B)             <- 3 (A)
//    6      -> 1 (B)          -> 2 (B)          <- 3 (A)             <- 5 (B)
//    7      -> 3 (B)          -> 4 (B)          <- 5 (B)             <- 4 (A)
//
// (A) and (B) name the tree of the edge. Edges are coloured in tree order, each with the first
// colour free at its sender; when that colour is taken at the receiver, the alternating path
// from the receiver is flipped first (0 -> 1 ends on lane 1 that way).
#include "lane_coloring.hpp"

#include <algorithm>
#include <vector>

namespace multilane::algo {

namespace {

// Proper edge colouring of a bipartite multigraph with `colors` colours (its max degree).
// Vertices 0..n-1 are senders, n..2n-1 receivers.
class BipartiteColoring {
 public:
  BipartiteColoring(int vertices, int colors)
      : colors_(colors), at_(static_cast<std::size_t>(vertices) * colors, -1) {}

  // Colours edge (u, v) and returns its index.
  int add(int u, int v) {
    const int e = static_cast<int>(ends_.size());
    ends_.push_back({u, v});
    color_.push_back(-1);
    const int a = free_color(u);
    const int b = free_color(v);
    if (slot(v, a) != -1) flip_path(v, a, b);  // afterwards a is free at v, still free at u
    set(e, a);
    return e;
  }
  int color(int e) const { return color_[e]; }

 private:
  int& slot(int vertex, int c) { return at_[static_cast<std::size_t>(vertex) * colors_ + c]; }
  int free_color(int vertex) {
    for (int c = 0; c < colors_; ++c) {
      if (slot(vertex, c) == -1) return c;
    }
    return 0;  // unreachable when colors_ is the max degree
  }
  int other_end(int e, int vertex) const {
    return ends_[e].first == vertex ? ends_[e].second : ends_[e].first;
  }
  void set(int e, int c) {
    color_[e] = c;
    slot(ends_[e].first, c) = e;
    slot(ends_[e].second, c) = e;
  }
  void unset(int e) {
    slot(ends_[e].first, color_[e]) = -1;
    slot(ends_[e].second, color_[e]) = -1;
  }
  // Swaps colours a and b along the a/b-alternating path that starts at `start` with colour a.
  void flip_path(int start, int a, int b) {
    std::vector<int> path;
    int vertex = start;
    int c = a;
    while (slot(vertex, c) != -1) {
      const int e = slot(vertex, c);
      path.push_back(e);
      vertex = other_end(e, vertex);
      c = (c == a) ? b : a;
    }
    for (int e : path) unset(e);
    for (int e : path) set(e, color_[e] == a ? b : a);
  }

  int colors_;
  std::vector<int> at_;  // (vertex, colour) -> edge
  std::vector<std::pair<int, int>> ends_;
  std::vector<int> color_;
};

bool crosses_nodes(const Platform& platform, const TreeEdge& e) {
  return platform.node_of(e.from) != platform.node_of(e.to);
}

}  // namespace

void assign_lanes(std::span<Tree* const> trees, const Platform& platform) {
  const int nodes = static_cast<int>(platform.nodes.size());
  std::vector<int> out_degree(nodes, 0);
  std::vector<int> in_degree(nodes, 0);
  int max_degree = 0;
  for (Tree* t : trees) {
    for (auto& e : t->edges()) {
      e.lane = kAnyLane;
      if (e.lanes != EdgeLanes::Colored || !crosses_nodes(platform, e)) continue;
      max_degree = std::max(max_degree, ++out_degree[platform.node_of(e.from)]);
      max_degree = std::max(max_degree, ++in_degree[platform.node_of(e.to)]);
    }
  }
  if (max_degree == 0) return;

  // Colour every edge first: a later alternating-path flip may recolour an earlier edge.
  BipartiteColoring coloring(2 * nodes, max_degree);
  std::vector<std::pair<TreeEdge*, int>> colored;
  for (Tree* t : trees) {
    for (auto& e : t->edges()) {
      if (e.lanes != EdgeLanes::Colored || !crosses_nodes(platform, e)) continue;
      colored.emplace_back(&e,
                           coloring.add(platform.node_of(e.from), nodes + platform.node_of(e.to)));
    }
  }
  for (auto [e, index] : colored) {
    const int lanes = std::min(platform.lanes_of(e->from), platform.lanes_of(e->to));
    e->lane = max_degree < lanes ? kAnyLane : coloring.color(index) % lanes;
  }
}

}  // namespace multilane::algo
