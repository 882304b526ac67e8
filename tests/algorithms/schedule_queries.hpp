// schedule_queries.hpp — small questions tests ask of a schedule (who sends what to whom).
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane::testing {

struct Transfer {
  int from;
  int to;
  Range range;
  int lane;
};

inline std::vector<Transfer> sends_of(const Schedule& s) {
  std::vector<Transfer> out;
  for (int r = 0; r < s.num_ranks(); ++r) {
    for (const Op& op : s.program(r)) {
      if (op.kind == OpKind::Send) out.push_back({r, op.peer, op.range, op.lane});
    }
  }
  return out;
}

// Distinct peers `rank` sends to / receives from.
inline std::set<int> peers(const Schedule& s, int rank, OpKind kind) {
  std::set<int> out;
  for (const Op& op : s.program(rank)) {
    if (op.kind == kind) out.insert(op.peer);
  }
  return out;
}

inline std::set<int> lanes(const Schedule& s, int rank, OpKind kind) {
  std::set<int> out;
  for (const Op& op : s.program(rank)) {
    if (op.kind == kind) out.insert(op.lane);
  }
  return out;
}

// Bytes and distinct ordered rank pairs that cross between sites.
inline std::pair<std::uint64_t, std::set<std::pair<int, int>>> wan_traffic(const Schedule& s,
                                                                           const Platform& p) {
  std::uint64_t bytes = 0;
  std::set<std::pair<int, int>> pairs;
  for (const auto& t : sends_of(s)) {
    if (p.site_of(t.from) != p.site_of(t.to)) {
      bytes += t.range.length;
      pairs.insert({t.from, t.to});
    }
  }
  return {bytes, pairs};
}

}  // namespace multilane::testing
