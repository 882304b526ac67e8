#include "hier_nodes.hpp"

#include <algorithm>

namespace multilane::algo {

int NodeGroup::local_of(int rank) const {
  return static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
}

NodeGroups node_groups(const Platform& platform, int root) {
  NodeGroups out;
  std::vector<int> group_of_node(platform.nodes.size(), -1);
  out.group_of.resize(platform.num_ranks());
  for (int r = 0; r < platform.num_ranks(); ++r) {
    int& g = group_of_node[platform.node_of(r)];
    if (g < 0) {
      g = static_cast<int>(out.groups.size());
      out.groups.push_back({platform.node_of(r), {}, r});
    }
    out.groups[g].members.push_back(r);
    out.group_of[r] = g;
  }
  // Groups in node order (ranks may be placed on nodes in any order).
  std::sort(out.groups.begin(), out.groups.end(),
            [](const NodeGroup& a, const NodeGroup& b) { return a.node < b.node; });
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    for (int r : out.groups[g].members) out.group_of[r] = static_cast<int>(g);
  }
  out.root_group = out.group_of[root];
  out.groups[out.root_group].leader = root;
  return out;
}

std::optional<Range> consecutive_blocks(const NodeGroup& group, Buffer buffer, std::uint64_t size) {
  for (std::size_t i = 1; i < group.members.size(); ++i) {
    if (group.members[i] != group.members[0] + static_cast<int>(i)) return std::nullopt;
  }
  return Range{buffer, static_cast<std::uint64_t>(group.members[0]) * size,
               group.members.size() * size};
}

std::vector<OpIndex> replay_program(ScheduleBuilder& b, const Schedule& sub, int sub_rank,
                                    const std::vector<int>& ranks) {
  std::vector<OpIndex> writes;
  b.need_scratch(sub.scratch_bytes[sub_rank]);
  for (const Op& op : sub.program(sub_rank)) {
    const auto deps = sub.deps_of(op);
    switch (op.kind) {
      case OpKind::Send:
        b.send(ranks[op.peer], op.range, op.lane, deps);
        break;
      case OpKind::Recv:
        writes.push_back(b.recv(ranks[op.peer], op.range, op.lane, deps));
        break;
      case OpKind::Copy:
        writes.push_back(b.copy(op.range, op.source, deps));
        break;
      default:
        b.group(op.kind, ranks[op.peer], op.range, op.source, deps);
        break;
    }
  }
  return writes;
}

std::vector<int> leader_ranks(const NodeGroups& nodes) {
  std::vector<int> leaders;
  for (const NodeGroup& g : nodes.groups) leaders.push_back(g.leader);
  return leaders;
}

Platform leaders_platform(const Platform& platform, const NodeGroups& nodes) {
  Platform sub = platform;
  sub.ranks.clear();
  for (int leader : leader_ranks(nodes)) sub.ranks.push_back(platform.ranks[leader]);
  return sub;
}

}  // namespace multilane::algo
