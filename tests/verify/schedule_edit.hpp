// tests/verify/schedule_edit.hpp — mutations of schedules for the verifier's tests.
#pragma once

#include <utility>

#include "multilane/schedule.hpp"

namespace multilane::testing {

inline Op& op_at(Schedule& s, int rank, OpIndex index) {
  return s.ops[s.rank_begin[rank] + index];
}

// Deletes one operation: later operations of the rank move down by one, dependencies on the
// deleted one are dropped, dependencies on later ones are renumbered.
inline Schedule remove_op(const Schedule& s, int rank, OpIndex removed) {
  Schedule out = s;
  out.ops.clear();
  out.deps.clear();
  for (int r = 0; r < s.num_ranks(); ++r) {
    out.rank_begin[r] = static_cast<std::uint32_t>(out.ops.size());
    const auto program = s.program(r);
    for (OpIndex i = 0; i < program.size(); ++i) {
      if (r == rank && i == removed) continue;
      Op op = program[i];
      op.deps_begin = static_cast<std::uint32_t>(out.deps.size());
      for (OpIndex d : s.deps_of(program[i])) {
        if (r == rank && d == removed) continue;
        out.deps.push_back(r == rank && d > removed ? d - 1 : d);
      }
      op.deps_count = static_cast<std::uint32_t>(out.deps.size()) - op.deps_begin;
      out.ops.push_back(op);
    }
  }
  out.rank_begin.back() = static_cast<std::uint32_t>(out.ops.size());
  return out;
}

// Replaces the dependency list of one operation (the new list must not be longer).
inline void set_deps(Schedule& s, int rank, OpIndex index, std::initializer_list<OpIndex> deps) {
  Op& op = op_at(s, rank, index);
  op.deps_count = static_cast<std::uint32_t>(deps.size());
  std::uint32_t at = op.deps_begin;
  for (OpIndex d : deps) s.deps[at++] = d;
}

}  // namespace multilane::testing
