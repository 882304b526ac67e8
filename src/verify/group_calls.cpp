// verify/group_calls.cpp — matches group ops into group calls, node by node (matching.hpp).
#include <fmt/format.h>

#include "schedule/group_call.hpp"
#include "verify/matching.hpp"

namespace multilane::verify {

namespace {

// Each member's group ops (global indices) in program order.
std::vector<std::vector<std::uint32_t>> group_ops_of(const Schedule& s,
                                                     const std::vector<int>& members) {
  std::vector<std::vector<std::uint32_t>> out(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    for (std::uint32_t g = s.rank_begin[r]; g < s.rank_begin[r + 1]; ++g) {
      if (is_group_op(s.ops[g].kind)) out[i].push_back(g);
    }
  }
  return out;
}

int member_index(const std::vector<int>& members, int rank) {
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

void match_group_calls(const Schedule& s, const Platform& platform, ErrorSink& sink, Matching& m) {
  m.group_call_of_op.assign(s.ops.size(), kNone);
  std::vector<int> group_of_node(platform.nodes.size(), -1);
  for (int r = 0; r < s.num_ranks(); ++r) {
    int& g = group_of_node[platform.node_of(r)];
    if (g < 0) {
      g = static_cast<int>(m.node_members.size());
      m.node_members.emplace_back();
    }
    m.node_members[g].push_back(r);
  }
  for (std::size_t n = 0; n < m.node_members.size(); ++n) {
    m.node_call_begin.push_back(static_cast<std::uint32_t>(m.group_calls.size()));
    const std::vector<int>& members = m.node_members[n];
    const auto ops = group_ops_of(s, members);
    bool counts_agree = true;
    for (std::size_t i = 1; i < members.size(); ++i) {
      if (ops[i].size() != ops[0].size()) {
        sink.add(fmt::format(
            "rank {} takes part in {} group calls but rank {} on the same node takes part in {}",
            members[0], ops[0].size(), members[i], ops[i].size()));
        counts_agree = false;
        m.executable = false;
        break;
      }
    }
    if (!counts_agree) continue;
    for (std::size_t k = 0; k < ops[0].size(); ++k) {
      GroupCall call;
      call.node_group = static_cast<int>(n);
      std::vector<const Op*> call_ops;
      for (std::size_t i = 0; i < members.size(); ++i) {
        call.ops.push_back(ops[i][k]);
        call_ops.push_back(&s.ops[ops[i][k]]);
      }
      call.root = member_index(members, call_ops[0]->peer);
      const std::string problem = group_call_problem(call_ops, call.root);
      if (!problem.empty()) {
        std::string who;
        for (std::size_t i = 0; i < members.size(); ++i) {
          who += fmt::format("{}member {} is {}", i == 0 ? "" : ", ", i,
                             describe_global_op(s, call.ops[i]));
        }
        sink.add(fmt::format("group call #{} on node {}: {} ({})", k,
                             platform.nodes[platform.node_of(members[0])].name, problem, who));
        m.executable = false;
        continue;
      }
      call.block =
          group_block(call_ops[0]->kind, static_cast<int>(members.size()), *call_ops[call.root]);
      for (const std::uint32_t g : call.ops) {
        m.group_call_of_op[g] = static_cast<std::uint32_t>(m.group_calls.size());
      }
      m.group_calls.push_back(std::move(call));
    }
  }
  m.node_call_begin.push_back(static_cast<std::uint32_t>(m.group_calls.size()));
}

}  // namespace multilane::verify
