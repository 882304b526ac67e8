// runtime/transport/reused_nodes.hpp — the nodes of a map's erased entries, kept for the next
// insert, so that an engine which posts and completes a receive per message allocates nothing
// for it (a node-based map allocates per insert).
//
// Values keep their members' storage between uses: `reset()` on the value clears what must
// not carry over to the next entry. At most kKept nodes are kept; the rest are freed.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace multilane::runtime {

template <typename Map>
class ReusedNodes {
 public:
  static constexpr std::size_t kKept = 64;
  // Nodes made up front (prefill()): as many entries as a busy engine holds at once for small
  // calls, so that a late peak of them (a scheduling hiccup) allocates nothing either.
  static constexpr std::size_t kPrefilled = 16;

  ReusedNodes() { spare_.reserve(kKept); }

  // Makes kPrefilled spare nodes in `map` (empty; keys from key_of(i), all different), each
  // value readied by prepare(value) (reserve what an entry's members will need), and reserves
  // the map's room for them where it has any (an unordered map's buckets).
  template <typename KeyOf, typename Prepare>
  void prefill(Map& map, KeyOf key_of, Prepare prepare) {
    if constexpr (requires { map.reserve(kPrefilled); }) map.reserve(kPrefilled);
    for (std::size_t i = 0; i < kPrefilled; ++i) prepare(map[key_of(i)]);
    while (!map.empty()) spare_.push_back(map.extract(map.begin()));
  }

  // The entry of `key`: the existing one, or a new one in a kept node (reset), or a new node.
  typename Map::mapped_type& at(Map& map, const typename Map::key_type& key) {
    if (spare_.empty()) return map[key];
    auto node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = key;
    auto inserted = map.insert(std::move(node));
    if (!inserted.inserted) spare_.push_back(std::move(inserted.node));
    return inserted.position->second;
  }

  // Erases the entry at `it` (take what is needed from its value first), keeping its node.
  void erase(Map& map, typename Map::iterator it) {
    auto node = map.extract(it);
    if (spare_.size() >= kKept) return;
    node.mapped().reset();
    spare_.push_back(std::move(node));
  }

 private:
  std::vector<typename Map::node_type> spare_;
};

}  // namespace multilane::runtime
