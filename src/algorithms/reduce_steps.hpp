// reduce_steps.hpp — the steps reductions are made of: pieces of a vector, the ring's
// reduce-scatter and allgather, recursive halving, and recursive doubling of whole vectors.
//
// Each step is written for "positions" (an order of ranks, `ring` or `rank_at`) and for ranges
// the caller chooses, so allreduce, reduce, reduce-scatter and the site-aware lanes share them:
// where a rank's input piece j is (`input`), where it combines piece j (`place`), and which
// earlier operations must complete first (`after`). Every step emits the current rank's
// operations only (ScheduleBuilder::current_rank()).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/schedule.hpp"
#include "support/power_of_two.hpp"

namespace multilane::algo {

// A vector cut into pieces: piece i is bytes [bounds[i], bounds[i+1]).
struct Pieces {
  std::vector<std::uint64_t> bounds;
  int count() const { return static_cast<int>(bounds.size()) - 1; }
  std::uint64_t offset(int i) const { return bounds[i]; }
  std::uint64_t length(int i) const { return bounds[i + 1] - bounds[i]; }
  // Pieces [first, last) as one range of `buffer`, `base` bytes in.
  Range range(Buffer buffer, int first, int last, std::uint64_t base = 0) const {
    return {buffer, base + bounds[first], bounds[last] - bounds[first]};
  }
};
// `n` pieces of whole `element_size`-byte elements, the first ones one element longer.
Pieces even_pieces(std::uint64_t size, int n, std::uint64_t element_size);
// `n` pieces of `block` bytes each (reduce-scatter's blocks).
Pieces equal_pieces(std::uint64_t block, int n);
// A reduce-scatter's p blocks in rank order: BuildParams::counts (reduce-scatterv,
// MPI_Reduce_scatter) or `size` bytes each (MPI_Reduce_scatter_block).
Pieces reduce_scatter_blocks(const BuildParams& params, int p);

using PieceRange = std::function<Range(int piece)>;

// Ring reduce-scatter over ring[0..n): n-1 steps; in step s position i sends its partial of
// piece i-s-1 to position i+1 and combines piece i-s-2 from position i-1 (indices mod n), so
// position i ends with piece i reduced over the ring in place(i). place(j) may reuse room for
// different pieces as long as the two pieces of consecutive steps differ (the caller may
// alternate two slots). Returns every operation emitted (the last combine last).
std::vector<OpIndex> ring_reduce_scatter(ScheduleBuilder& b, std::span<const int> ring,
                                         int position, const PieceRange& input,
                                         const PieceRange& place, std::span<const OpIndex> after);

// Ring allgather over ring[0..n): position i holds piece i in place(i) once `after` completed;
// in step s it sends piece i-s to position i+1 and receives piece i-s-1 from position i-1.
// Returns the receives.
std::vector<OpIndex> ring_allgather(ScheduleBuilder& b, std::span<const int> ring, int position,
                                    const PieceRange& place, std::span<const OpIndex> after);

// Recursive halving over q = 2^k positions (rank_at), pieces 0..q-1 of a vector that every
// position holds, its own contribution already in `acc` (a buffer holding the whole vector at
// the pieces' offsets) once `after` completed. In the step of distance d, position v keeps the
// half of its range that holds piece v, sends the other half to v^d and combines v^d's copy of
// the kept half. Position v ends with piece v reduced over all q. Returns `after` and every
// operation emitted (the last combine last).
std::vector<OpIndex> recursive_halving(ScheduleBuilder& b, int q, int position,
                                       const std::function<int(int)>& rank_at, const Pieces& pieces,
                                       Buffer acc, std::span<const OpIndex> after);

// Recursive-doubling allreduce of the whole `range` over n positions (any n), each position's
// contribution in `range` once `after` completed: the n-q extras hand their vector to position
// v-q first and get the result back last; the q others exchange and combine whole vectors in
// log q steps, through `incoming` (room of range.length bytes for a partner's vector). Every
// position ends with the same bits. Returns the last operations.
std::vector<OpIndex> recursive_doubling_allreduce(ScheduleBuilder& b, int n, int position,
                                                  const std::function<int(int)>& rank_at,
                                                  const Range& range, const Range& incoming,
                                                  std::span<const OpIndex> after);

// The builder of a reduction schedule, its element size set from the parameters.
ScheduleBuilder reduction_builder(Collective collective, std::string algorithm, int num_ranks,
                                  const BuildParams& params, std::uint64_t segment = 0);

}  // namespace multilane::algo
