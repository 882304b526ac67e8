// multilane/collective.hpp — what each collective means, independent of any algorithm.
//
// Buffer sizes and the expected result are fixed by the collective (MPI semantics), never by
// the algorithm; the verifier, the runtime's --check and the examples all read them here.
//
//   bcast     Recv: `size` bytes on every rank; the root's Recv holds the input.
//   scatter   root's Send: num_ranks*size; every Recv: size. Rank i gets block i.
//   gather    every Send: size; root's Recv: num_ranks*size. Block i comes from rank i.
//   allgather every Send: size; every Recv: num_ranks*size.
//   alltoall  every Send and Recv: num_ranks*size. Block j of rank i goes to block i of rank j.
//   reduce    every Send: size; root's Recv: size. The root gets the reduction of every Send.
//   allreduce every Send and Recv: size. Every rank gets the reduction of every Send.
//   reduce-scatter (MPI_Reduce_scatter_block)
//             every Send: num_ranks*size; every Recv: size. Rank i gets the reduction of block
//             i of every Send.
//   scan      every Send and Recv: size. Rank i gets the reduction of the Sends of ranks 0..i
//             (MPI_Scan).
//   exscan    every Send: size; every Recv but rank 0's: size. Rank i > 0 gets the reduction of
//             the Sends of ranks 0..i-1 (MPI_Exscan); rank 0's Recv is empty, so no
//             schedule writes it (MPI leaves it undefined, multilane leaves it untouched).
//
// The v-forms have a block size per rank, `counts` (p = num_ranks), packed in rank order
// (block i starts at counts[0] + ... + counts[i-1]); MPI's displacements are the caller's to
// map onto this layout.
//   gatherv    counts[i]: rank i's block. Every Send: counts[rank]; root's Recv: their sum.
//   scatterv   counts[i]: rank i's block. Root's Send: their sum; every Recv: counts[rank].
//   allgatherv counts[i]: rank i's block. Every Send: counts[rank]; every Recv: their sum.
//   alltoallv  counts[i*p + j]: the bytes rank i sends rank j (p² entries). Rank i's Send holds
//              its row (block j for rank j), its Recv its column (block j from rank j).
//   reduce-scatterv (MPI_Reduce_scatter)
//              counts[i]: rank i's block. Every Send: their sum; every Recv: counts[rank]. Rank
//              i gets block i combined over every rank; counts are whole elements.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane {

std::uint64_t buffer_size(Collective collective, Buffer buffer, int rank, int num_ranks, int root,
                          std::uint64_t size, std::span<const std::uint64_t> counts = {});

// Why `counts` does not fit the collective on `num_ranks` ranks (the v-forms need p entries,
// alltoallv p²; the others none), or nullopt when it does.
std::optional<std::string> counts_error(Collective collective, int num_ranks,
                                        std::span<const std::uint64_t> counts);
// The largest count (0 for none): the v-forms' Schedule::size.
std::uint64_t largest_count(std::span<const std::uint64_t> counts);

// Where the blocks of a packed layout start: offsets[i] = counts[first] + ... + counts[i - 1]
// for i in [0, n], of the n counts from `first` on, `stride` apart (an alltoallv's row: first
// i*p, stride 1; its column: first j, stride p).
std::vector<std::uint64_t> block_offsets(std::span<const std::uint64_t> counts, int n,
                                         std::size_t first = 0, std::size_t stride = 1);

// The buffer that holds a rank's input before the call (bcast works in place in Recv).
Buffer input_buffer(Collective collective);
// Whether `rank` contributes input data at all (only the root for bcast and scatter).
bool has_input(Collective collective, int rank, int root);

// A run of bytes of a rank's Recv buffer and the input bytes it must hold after the call:
// Recv[offset, offset+length) == input of `origin_rank` at [origin_offset, origin_offset+length),
// or, when `reduced`, the reduction over ranks 0..reduced_ranks-1 (every rank but for the
// scans) of the inputs at those offsets (origin_rank is then unused).
struct ExpectedPiece {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  int origin_rank = 0;
  std::uint64_t origin_offset = 0;
  bool reduced = false;
  int reduced_ranks = 0;
};
// Every byte of `rank`'s Recv buffer is covered by exactly one piece, in increasing offset.
std::vector<ExpectedPiece> expected_result(Collective collective, int rank, int num_ranks, int root,
                                           std::uint64_t size,
                                           std::span<const std::uint64_t> counts = {});

}  // namespace multilane
