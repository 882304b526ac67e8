#include "verify/deadlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace multilane::verify {

namespace {

struct WaitEdge {
  std::uint32_t target;
  std::string_view reason;
};

WaitEdge waits_for(const Executor& x, std::uint32_t op) {
  const Schedule& s = x.schedule();
  if (!x.ready(op)) {
    const int rank = rank_of_op(s, op);
    for (const OpIndex d : s.deps_of(s.ops[op])) {
      const std::uint32_t g = s.rank_begin[rank] + d;
      if (!x.done(g)) return {g, "its dependency"};
    }
  }
  const Matching& m = x.matching();
  if (is_group_op(s.ops[op].kind)) {
    // Ready, so a member of its call, or of an earlier call of the node, is not.
    const GroupCall& mine = m.group_calls[m.group_call_of_op[op]];
    const GroupCall& next = m.group_calls[x.next_group_call(mine.node_group)];
    for (const std::uint32_t g : next.ops) {
      if (!x.ready(g)) {
        return {g, &next == &mine ? "its group call's member" : "the earlier group call at"};
      }
    }
  }
  const std::uint32_t t = m.transfer_of_op[op];
  const Transfer& mine = m.transfers[t];
  const std::uint32_t partner = mine.send == op ? mine.recv : mine.send;
  if (!x.ready(partner)) return {partner, "its match"};
  // Both ends are ready, so an earlier message of the pair is still pending, and one of its
  // ends is not ready (otherwise it would have been delivered).
  const Transfer& earlier = m.transfers[x.next_transfer(m.pair_of_transfer[t])];
  return {x.ready(earlier.send) ? earlier.recv : earlier.send,
          "the earlier message of the pair at"};
}

}  // namespace

std::string describe_deadlock(const Executor& x) {
  const Schedule& s = x.schedule();
  std::uint32_t start = 0;
  while (x.done(start)) ++start;

  std::vector<WaitEdge> path;  // path[i]: how op i of the walk waits for op i+1
  std::vector<std::uint32_t> walk{start};
  std::unordered_map<std::uint32_t, std::size_t> position{{start, 0}};
  std::size_t cycle_begin = 0;
  for (;;) {
    const WaitEdge e = waits_for(x, walk.back());
    path.push_back(e);
    if (const auto seen = position.find(e.target); seen != position.end()) {
      cycle_begin = seen->second;
      break;
    }
    position.emplace(e.target, walk.size());
    walk.push_back(e.target);
  }

  // Rotate the cycle to start at its lowest operation.
  std::vector<std::uint32_t> ops(walk.begin() + static_cast<std::ptrdiff_t>(cycle_begin),
                                 walk.end());
  std::vector<WaitEdge> edges(path.begin() + static_cast<std::ptrdiff_t>(cycle_begin), path.end());
  const auto lowest = std::min_element(ops.begin(), ops.end()) - ops.begin();
  std::rotate(ops.begin(), ops.begin() + lowest, ops.end());
  std::rotate(edges.begin(), edges.begin() + lowest, edges.end());

  std::string text = fmt::format("deadlock: {}", describe_global_op(s, ops[0]));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::uint32_t next = i + 1 < ops.size() ? ops[i + 1] : ops[0];
    text += fmt::format("{} waits for {} {}", i == 0 ? "" : ", which", edges[i].reason,
                        describe_global_op(s, next));
  }
  const std::uint64_t stuck = s.ops.size() - x.ops_completed();
  text += fmt::format(" ({} of {} operations never complete)", stuck, s.ops.size());
  return text;
}

}  // namespace multilane::verify
