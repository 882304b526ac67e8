// alltoall_blocks.hpp — where an alltoall's blocks lie in a rank's buffers: its Send holds its
// row (block j for rank j), its Recv its column (block i from rank i), packed in rank order,
// each block BuildParams::size bytes or, for alltoallv, counts[i*p + j] from rank i to rank j.
#pragma once

#include <cstdint>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"

namespace multilane::algo {

// One rank's blocks in one of its buffers: block j at offsets[j], up to offsets[j+1].
struct Blocks {
  Buffer buffer;
  std::vector<std::uint64_t> offsets;
  Range operator()(int j) const { return {buffer, offsets[j], offsets[j + 1] - offsets[j]}; }
  // Blocks first..first+count-1 (consecutive ranks), as one range.
  Range run(int first, int count) const {
    return {buffer, offsets[first], offsets[first + count] - offsets[first]};
  }
};

inline Blocks blocks_of(Buffer buffer, int r, int p, const BuildParams& params) {
  const auto rank = static_cast<std::size_t>(r);
  const auto ranks = static_cast<std::size_t>(p);
  if (!params.counts.empty()) {
    return buffer == Buffer::Send ? Blocks{buffer, block_offsets(params.counts, p, rank * ranks, 1)}
                                  : Blocks{buffer, block_offsets(params.counts, p, rank, ranks)};
  }
  std::vector<std::uint64_t> offsets(ranks + 1);
  for (int j = 0; j <= p; ++j) offsets[j] = static_cast<std::uint64_t>(j) * params.size;
  return {buffer, std::move(offsets)};
}

// The bytes rank `from` sends rank `to`.
inline std::uint64_t block_bytes(const BuildParams& params, int p, int from, int to) {
  return params.counts.empty()
             ? params.size
             : params.counts[static_cast<std::size_t>(from) * static_cast<std::size_t>(p) +
                             static_cast<std::size_t>(to)];
}

}  // namespace multilane::algo
