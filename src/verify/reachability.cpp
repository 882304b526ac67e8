#include "verify/reachability.hpp"

#include <algorithm>

namespace multilane::verify {

namespace {
constexpr std::size_t kScanDirectDeps = 16;  // longer lists go straight to the table/search
}

Reachability::Reachability(const Schedule& schedule, int rank, std::size_t table_limit_ops)
    : schedule_(schedule), program_(schedule.program(rank)), table_limit_ops_(table_limit_ops) {}

bool Reachability::precedes(OpIndex a, OpIndex b) {
  if (a >= b) return false;
  if (directly_depends(b, a)) return true;
  if (program_.size() <= table_limit_ops_) {
    if (table_.empty()) build_table();
    return (table_[b * words_per_row_ + a / 64] >> (a % 64)) & 1u;
  }
  return search(a, b);
}

bool Reachability::directly_depends(OpIndex b, OpIndex a) const {
  const auto d = deps(b);
  if (d.size() > kScanDirectDeps) return false;
  return std::find(d.begin(), d.end(), a) != d.end();
}

void Reachability::build_table() {
  const std::size_t n = program_.size();
  words_per_row_ = (n + 63) / 64;
  table_.assign(n * words_per_row_, 0);
  for (std::size_t b = 0; b < n; ++b) {
    std::uint64_t* row = &table_[b * words_per_row_];
    for (const OpIndex a : deps(static_cast<OpIndex>(b))) {
      const std::uint64_t* dep_row = &table_[a * words_per_row_];
      // Ancestors of a are all below a: only the first words of its row can be non-zero.
      for (std::size_t w = 0; w <= a / 64; ++w) row[w] |= dep_row[w];
      row[a / 64] |= std::uint64_t{1} << (a % 64);
    }
  }
}

bool Reachability::search(OpIndex a, OpIndex b) {
  if (visited_.empty()) visited_.assign(program_.size(), 0);
  if (++epoch_ == 0) {  // wrapped: forget every old visit
    std::fill(visited_.begin(), visited_.end(), 0);
    epoch_ = 1;
  }
  stack_.assign(1, b);
  while (!stack_.empty()) {
    const OpIndex x = stack_.back();
    stack_.pop_back();
    for (const OpIndex d : deps(x)) {
      if (d == a) return true;
      if (d > a && visited_[d] != epoch_) {
        visited_[d] = epoch_;
        stack_.push_back(d);
      }
    }
  }
  return false;
}

}  // namespace multilane::verify
