// recursive_doubling.hpp — recursive-doubling allgather for any number of positions.
//
// Positions 0..n-1 each hold one chunk; afterwards every position holds all n. With q the
// largest power of two <= n, the e = n-q "extra" positions first hand their chunk to position
// v-q, the q others run the classic log2(q) exchange steps (partner v^mask, blocks doubling,
// each block also carrying the folded-in extras' chunks), and finally each position v < e
// sends the whole result to v+q. Two extra steps make it work for every n.
//
// Used by allgather (positions are ranks, chunks their blocks) and by van de Geijn's
// broadcast (positions are relative ranks, chunks the pieces of the scattered message).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "multilane/schedule.hpp"

namespace multilane::algo {

struct ChunkLayout {
  int positions = 0;
  std::function<int(int position)> rank_at;
  // The bytes (in Recv) of the chunks of positions [first, last): must be contiguous.
  std::function<Range(int first, int last)> chunks;
};

// Appends the allgather steps of `position` to the builder's current rank; every operation
// also waits for `ready` (the operations that put the position's own chunk in place, and any
// that still read from the Recv buffer).
void emit_recursive_doubling(ScheduleBuilder& builder, int position, const ChunkLayout& layout,
                             std::span<const OpIndex> ready);

}  // namespace multilane::algo
