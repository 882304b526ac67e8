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
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane {

std::uint64_t buffer_size(Collective collective, Buffer buffer, int rank, int num_ranks, int root,
                          std::uint64_t size);

// The buffer that holds a rank's input before the call (bcast works in place in Recv).
Buffer input_buffer(Collective collective);
// Whether `rank` contributes input data at all (only the root for bcast and scatter).
bool has_input(Collective collective, int rank, int root);

// A run of bytes of a rank's Recv buffer and the input bytes it must hold after the call:
// Recv[offset, offset+length) == input of `origin_rank` at [origin_offset, origin_offset+length),
// or, when `reduced`, the reduction over every rank of the inputs at those offsets
// (origin_rank is then unused).
struct ExpectedPiece {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  int origin_rank = 0;
  std::uint64_t origin_offset = 0;
  bool reduced = false;
};
// Every byte of `rank`'s Recv buffer is covered by exactly one piece, in increasing offset.
std::vector<ExpectedPiece> expected_result(Collective collective, int rank, int num_ranks, int root,
                                           std::uint64_t size);

}  // namespace multilane
