// schedule/group_call.cpp — see group_call.hpp.
#include "schedule/group_call.hpp"

#include <fmt/format.h>

namespace multilane {

GroupLengths group_lengths(OpKind kind, bool is_root, int members, std::uint64_t block) {
  const std::uint64_t all = block * static_cast<std::uint64_t>(members);
  switch (kind) {
    case OpKind::GroupBcast:
      return is_root ? GroupLengths{block, 0} : GroupLengths{0, block};
    case OpKind::GroupScatter:
      return {is_root ? all : 0, block};
    case OpKind::GroupGather:
      return {block, is_root ? all : 0};
    case OpKind::GroupAllgather:
      return {block, all};
    case OpKind::GroupAlltoall:
      return {all, all};
    default:
      return {};
  }
}

std::uint64_t group_block(OpKind kind, int members, const Op& root_op) {
  switch (kind) {
    case OpKind::GroupScatter:
      return root_op.range.length;
    case OpKind::GroupAlltoall:
      return root_op.source.length / static_cast<std::uint64_t>(members);
    default:
      return root_op.source.length;
  }
}

std::string group_call_problem(std::span<const Op* const> ops, int root) {
  const int members = static_cast<int>(ops.size());
  const Op& first = *ops[0];
  for (int i = 1; i < members; ++i) {
    if (ops[i]->kind != first.kind) {
      return fmt::format("member {} runs {} but member 0 runs {}", i, to_string(ops[i]->kind),
                         to_string(first.kind));
    }
    if (ops[i]->peer != first.peer) {
      return fmt::format("member {} names root rank {} but member 0 names root rank {}", i,
                         ops[i]->peer, first.peer);
    }
  }
  if (root < 0) return fmt::format("root rank {} is not on this node", first.peer);
  const std::uint64_t block = group_block(first.kind, members, *ops[root]);
  for (int i = 0; i < members; ++i) {
    const GroupLengths want = group_lengths(first.kind, i == root, members, block);
    if (ops[i]->source.length != want.source || ops[i]->range.length != want.range) {
      return fmt::format(
          "member {} reads {} and writes {} bytes but a {} of {}-byte blocks over {} members "
          "needs {} and {}",
          i, ops[i]->source.length, ops[i]->range.length, to_string(first.kind), block, members,
          want.source, want.range);
    }
  }
  return {};
}

std::vector<GroupMove> group_moves(OpKind kind, int root, int members, std::uint64_t block) {
  std::vector<GroupMove> moves;
  if (block == 0) return moves;
  const auto at = [block](int i) { return static_cast<std::uint64_t>(i) * block; };
  for (int u = 0; u < members; ++u) {
    switch (kind) {
      case OpKind::GroupBcast:
        if (u != root) moves.push_back({root, 0, u, 0, block});
        break;
      case OpKind::GroupScatter:
        moves.push_back({root, at(u), u, 0, block});
        break;
      case OpKind::GroupGather:
        moves.push_back({u, 0, root, at(u), block});
        break;
      case OpKind::GroupAllgather:
        for (int v = 0; v < members; ++v) moves.push_back({u, 0, v, at(u), block});
        break;
      case OpKind::GroupAlltoall:
        for (int v = 0; v < members; ++v) moves.push_back({u, at(v), v, at(u), block});
        break;
      default:
        break;
    }
  }
  return moves;
}

}  // namespace multilane
