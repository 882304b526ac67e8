#include "tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace multilane::algo {

namespace {
constexpr std::uint32_t kNoEdge = 0xffffffffu;
}

Tree::Tree(int num_ranks, int root) : num_ranks_(num_ranks), root_(root) {}

void Tree::add_edge(int from, int to, int phase, EdgeLanes lanes) {
  edges_.push_back({from, to, phase, lanes, kAnyLane});
}

void Tree::finalize() {
  std::stable_sort(edges_.begin(), edges_.end(),
                   [](const TreeEdge& a, const TreeEdge& b) { return a.from < b.from; });
  first_out_.assign(static_cast<std::size_t>(num_ranks_) + 1, 0);
  in_edge_.assign(num_ranks_, kNoEdge);
  for (std::uint32_t i = 0; i < edges_.size(); ++i) {
    const auto& e = edges_[i];
    ++first_out_[e.from + 1];
    if (e.to == root_ || in_edge_[e.to] != kNoEdge) {
      throw std::logic_error(fmt::format("tree: rank {} has two parents or is the root", e.to));
    }
    in_edge_[e.to] = i;
  }
  for (int r = 0; r < num_ranks_; ++r) first_out_[r + 1] += first_out_[r];
  // Every rank must be reached from the root (a cycle would give ranks parents but no path).
  std::vector<int> frontier{root_};
  std::vector<bool> reached(num_ranks_, false);
  reached[root_] = true;
  int count = 1;
  while (!frontier.empty()) {
    const int r = frontier.back();
    frontier.pop_back();
    for (const auto& e : edges_from(r)) {
      reached[e.to] = true;
      ++count;
      frontier.push_back(e.to);
    }
  }
  if (count != num_ranks_) {
    for (int r = 0; r < num_ranks_; ++r) {
      if (!reached[r]) {
        throw std::logic_error(fmt::format("tree: rank {} is not reached from root {}", r, root_));
      }
    }
  }
}

const TreeEdge* Tree::edge_to(int rank) const {
  return in_edge_[rank] == kNoEdge ? nullptr : &edges_[in_edge_[rank]];
}

std::span<const TreeEdge> Tree::edges_from(int rank) const {
  return {edges_.data() + first_out_[rank], edges_.data() + first_out_[rank + 1]};
}

void add_chain(Tree& tree, std::span<const int> order, int phase) {
  for (std::size_t i = 1; i < order.size(); ++i) tree.add_edge(order[i - 1], order[i], phase);
}

void add_binary_heap(Tree& tree, std::span<const int> order, int phase) {
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 2 * i + 1; c <= 2 * i + 2 && c < n; ++c) {
      tree.add_edge(order[i], order[c], phase);
    }
  }
}

void add_binomial(Tree& tree, std::span<const int> order, int first_phase) {
  const std::size_t n = order.size();
  for (std::size_t v = 0; v < n; ++v) {
    // The subtree of v spans [v, v + lowbit(v)); the root's spans everything.
    std::size_t mask = 1;
    while (mask < n) mask <<= 1;
    if (v != 0) mask = v & (~v + 1);
    int phase = first_phase;
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (v + mask < n) tree.add_edge(order[v], order[v + mask], phase++, EdgeLanes::Striped);
    }
  }
}

void add_flat(Tree& tree, std::span<const int> order, int phase) {
  for (std::size_t i = 1; i < order.size(); ++i) {
    tree.add_edge(order[0], order[i], phase, EdgeLanes::Striped);
  }
}

}  // namespace multilane::algo
