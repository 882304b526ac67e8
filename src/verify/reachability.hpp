// verify/reachability.hpp — "does op b (transitively) depend on op a?" within one rank.
//
// Dependencies point to earlier operations, so program order is a topological order and only
// a < b can hold. Most questions the race check asks are answered by b's direct dependencies.
// The rest go to an ancestor table (one bit per pair, built on first need) when the rank is
// small enough for it to stay within `table_limit_ops`² / 8 bytes, and otherwise to a
// depth-first search backwards from b that never goes below a.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane::verify {

class Reachability {
 public:
  static constexpr std::size_t kDefaultTableLimitOps = 4096;  // table <= 2 MiB

  Reachability(const Schedule& schedule, int rank,
               std::size_t table_limit_ops = kDefaultTableLimitOps);

  // True when b depends on a, directly or through other operations of the rank.
  bool precedes(OpIndex a, OpIndex b);

 private:
  std::span<const OpIndex> deps(OpIndex i) const { return schedule_.deps_of(program_[i]); }
  bool directly_depends(OpIndex b, OpIndex a) const;
  void build_table();
  bool search(OpIndex a, OpIndex b);

  const Schedule& schedule_;
  std::span<const Op> program_;
  std::size_t table_limit_ops_;
  std::size_t words_per_row_ = 0;
  std::vector<std::uint64_t> table_;    // row b: bit a set when b depends on a
  std::vector<std::uint32_t> visited_;  // search: epoch of the last visit per op
  std::uint32_t epoch_ = 0;
  std::vector<OpIndex> stack_;
};

}  // namespace multilane::verify
