// schedule/group_lowering.cpp — lower_group_ops() (group_call.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "schedule/group_call.hpp"

namespace multilane {

namespace {

Range sub_range(const Range& r, std::uint64_t offset, std::uint64_t length) {
  return {r.buffer, r.offset + offset, length};
}

// The plain ops replacing one group op, and whether its call copies once.
struct Expansion {
  std::vector<Op> ops;
  bool copied_once = false;
};

// Per global op index: the plain ops replacing it (group ops only).
std::vector<Expansion> expand_group_calls(const Schedule& s, const Platform& platform) {
  std::vector<Expansion> expansion(s.ops.size());
  std::vector<std::vector<int>> members(platform.nodes.size());
  for (int r = 0; r < s.num_ranks(); ++r) members[platform.node_of(r)].push_back(r);
  for (const std::vector<int>& node : members) {
    if (node.empty()) continue;
    std::vector<std::vector<std::uint32_t>> calls(node.size());
    for (std::size_t i = 0; i < node.size(); ++i) {
      for (std::uint32_t g = s.rank_begin[node[i]]; g < s.rank_begin[node[i] + 1]; ++g) {
        if (is_group_op(s.ops[g].kind)) calls[i].push_back(g);
      }
      if (calls[i].size() != calls[0].size()) {
        throw std::invalid_argument(
            fmt::format("rank {} takes part in {} group calls but rank {} on its node in {}",
                        node[i], calls[i].size(), node[0], calls[0].size()));
      }
    }
    for (std::size_t k = 0; k < calls[0].size(); ++k) {
      std::vector<const Op*> ops;
      for (const auto& c : calls) ops.push_back(&s.ops[c[k]]);
      const int root =
          static_cast<int>(std::find(node.begin(), node.end(), ops[0]->peer) - node.begin());
      const std::string problem =
          group_call_problem(ops, root < static_cast<int>(node.size()) ? root : -1);
      if (!problem.empty()) {
        throw std::invalid_argument(
            fmt::format("group call #{} of the node of rank {}: {}", k, node[0], problem));
      }
      const auto n = static_cast<int>(node.size());
      const std::uint64_t block = group_block(ops[0]->kind, n, *ops[root]);
      const bool once =
          platform.sites[platform.site_of(node[0])].shm.copies_once(static_cast<double>(block));
      for (std::size_t i = 0; i < node.size(); ++i) expansion[calls[i][k]].copied_once = once;
      for (const GroupMove& m : group_moves(ops[0]->kind, root, n, block)) {
        const Range from = sub_range(ops[m.from]->source, m.from_offset, m.length);
        const Range to = sub_range(ops[m.to]->range, m.to_offset, m.length);
        Op op;
        if (m.from == m.to) {
          op.kind = OpKind::Copy;
          op.range = to;
          op.source = from;
          expansion[calls[m.from][k]].ops.push_back(op);
          continue;
        }
        op.kind = OpKind::Send;
        op.peer = node[m.to];
        op.range = from;
        expansion[calls[m.from][k]].ops.push_back(op);
        op.kind = OpKind::Recv;
        op.peer = node[m.from];
        op.range = to;
        expansion[calls[m.to][k]].ops.push_back(op);
      }
    }
  }
  return expansion;
}

}  // namespace

bool has_group_ops(const Schedule& schedule) {
  return std::any_of(schedule.ops.begin(), schedule.ops.end(),
                     [](const Op& op) { return is_group_op(op.kind); });
}

LoweredGroupCalls lower_group_calls(const Schedule& s, const Platform& platform) {
  const auto expansion = expand_group_calls(s, platform);
  ScheduleBuilder b(s.collective, s.algorithm, s.num_ranks(), s.root, s.size, s.segment);
  std::vector<std::uint8_t> copied_once;
  std::vector<std::vector<OpIndex>> replaced;  // per op of the rank: its new indices
  std::vector<OpIndex> deps;
  for (int r = 0; r < s.num_ranks(); ++r) {
    b.start_rank(r);
    b.need_scratch(s.scratch_bytes[r]);
    const auto program = s.program(r);
    replaced.assign(program.size(), {});
    for (std::size_t i = 0; i < program.size(); ++i) {
      const Op& op = program[i];
      deps.clear();
      for (OpIndex d : s.deps_of(op))
        deps.insert(deps.end(), replaced[d].begin(), replaced[d].end());
      const bool group = is_group_op(op.kind);
      const Expansion& e = expansion[s.rank_begin[r] + i];
      const auto& plain = group ? e.ops : std::vector<Op>{op};
      for (const Op& p : plain) {
        OpIndex added = kNoOp;
        if (p.kind == OpKind::Send) added = b.send(p.peer, p.range, p.lane, deps);
        if (p.kind == OpKind::Recv) added = b.recv(p.peer, p.range, p.lane, deps);
        if (p.kind == OpKind::Copy) added = b.copy(p.range, p.source, deps);
        if (added == kNoOp) continue;
        replaced[i].push_back(added);
        copied_once.push_back(group && e.copied_once && p.kind != OpKind::Copy ? 1 : 0);
      }
    }
  }
  return {b.finish(), std::move(copied_once)};
}

Schedule lower_group_ops(const Schedule& s, const Platform& platform) {
  return lower_group_calls(s, platform).schedule;
}

}  // namespace multilane
