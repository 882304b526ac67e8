#include "hier_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

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

SubPlacement same_buffers(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  return {{Buffer::Send, 0, send_bytes}, {Buffer::Recv, 0, recv_bytes}, 0, {}};
}

namespace {

Range place(const Range& range, const SubPlacement& at) {
  if (range.buffer == Buffer::Scratch) {
    return {Buffer::Scratch, at.scratch_offset + range.offset, range.length};
  }
  const Range& area = range.buffer == Buffer::Send ? at.send : at.recv;
  if (range.end() > area.length) {
    throw std::logic_error(
        fmt::format("replay: the sub-schedule's {} range [{}, {}) lies outside "
                    "the {} bytes placed for it",
                    to_string(range.buffer), range.offset, range.end(), area.length));
  }
  return {area.buffer, area.offset + range.offset, range.length};
}

bool reads_sub_send(const Op& op) {
  if (op.kind == OpKind::Send) return op.range.buffer == Buffer::Send;
  if (op.kind == OpKind::Recv) return false;
  return op.source.buffer == Buffer::Send && op.source.length > 0;
}

void append_unique(std::vector<OpIndex>& to, std::span<const OpIndex> from) {
  for (OpIndex i : from) {
    if (i != kNoOp && std::find(to.begin(), to.end(), i) == to.end()) to.push_back(i);
  }
}

}  // namespace

std::vector<OpIndex> replay_program(ScheduleBuilder& b, const Schedule& sub, int sub_rank,
                                    const std::vector<int>& ranks, const SubPlacement& at) {
  b.need_scratch(at.scratch_offset + sub.scratch_bytes[sub_rank]);
  const auto program = sub.program(sub_rank);
  // stands_for[i]: the new operations that complete what the sub's operation i does.
  std::vector<std::vector<OpIndex>> stands_for(program.size());
  std::vector<OpIndex> written;
  for (std::size_t i = 0; i < program.size(); ++i) {
    const Op& op = program[i];
    std::vector<OpIndex> deps;
    for (OpIndex d : sub.deps_of(op)) append_unique(deps, stands_for[d]);
    if (reads_sub_send(op)) append_unique(deps, at.send_ready);
    const Range range = place(op.range, at);
    const Range source = place(op.source, at);
    switch (op.kind) {
      case OpKind::Send:
        stands_for[i] = {b.send(ranks[op.peer], range, op.lane, deps)};
        break;
      case OpKind::Recv:
        stands_for[i] = {b.recv(ranks[op.peer], range, op.lane, deps)};
        break;
      case OpKind::Copy:
        stands_for[i] = range == source ? deps : std::vector{b.copy(range, source, deps)};
        break;
      default:
        stands_for[i] = {b.group(op.kind, ranks[op.peer], range, source, deps)};
        break;
    }
    if (op.kind != OpKind::Send) append_unique(written, stands_for[i]);
  }
  return written;
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
