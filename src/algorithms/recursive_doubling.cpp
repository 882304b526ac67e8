#include "recursive_doubling.hpp"

#include <algorithm>
#include <vector>
#include "support/power_of_two.hpp"

namespace multilane::algo {

namespace {

// The chunks held by the aligned block of `size` cube positions starting at `base`: the block
// itself and the extras folded into it.
std::vector<Range> block_chunks(const ChunkLayout& layout, int q, int base, int size) {
  const int n = layout.positions;
  std::vector<Range> ranges{layout.chunks(base, base + size)};
  const int extra_first = std::min(base + q, n);
  const int extra_last = std::min(base + size + q, n);
  if (extra_first < extra_last) ranges.push_back(layout.chunks(extra_first, extra_last));
  return ranges;
}

}  // namespace

void emit_recursive_doubling(ScheduleBuilder& b, int v, const ChunkLayout& layout,
                             std::span<const OpIndex> ready) {
  const int n = layout.positions;
  const int q = largest_power_of_two(n);
  std::vector<OpIndex> held(ready.begin(), ready.end());

  if (v >= q) {  // an extra: hand over the own chunk, get everything else at the end
    const int partner = layout.rank_at(v - q);
    b.send(partner, layout.chunks(v, v + 1), kAnyLane, held);
    b.recv(partner, layout.chunks(0, v), kAnyLane, held);
    b.recv(partner, layout.chunks(v + 1, n), kAnyLane, held);
    return;
  }
  const bool has_extra = v + q < n;
  if (has_extra) {
    held.push_back(b.recv(layout.rank_at(v + q), layout.chunks(v + q, v + q + 1), kAnyLane, held));
  }
  for (int mask = 1; mask < q; mask <<= 1) {
    const int partner = v ^ mask;
    const int partner_rank = layout.rank_at(partner);
    const auto mine = block_chunks(layout, q, v & ~(mask - 1), mask);
    const auto theirs = block_chunks(layout, q, partner & ~(mask - 1), mask);
    const std::vector<OpIndex> before = held;
    for (const Range& r : mine) b.send(partner_rank, r, kAnyLane, before);
    for (const Range& r : theirs) held.push_back(b.recv(partner_rank, r, kAnyLane, before));
  }
  if (has_extra) {
    const int extra_rank = layout.rank_at(v + q);
    b.send(extra_rank, layout.chunks(0, v + q), kAnyLane, held);
    b.send(extra_rank, layout.chunks(v + q + 1, n), kAnyLane, held);
  }
}

}  // namespace multilane::algo
