// runtime/check/data_check.cpp — see data_check.hpp.
#include "runtime/check/data_check.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "multilane/collective.hpp"
#include "runtime/check/reduction_inputs.hpp"

namespace multilane::runtime {

namespace {
constexpr std::byte kPoison{0xa5};
}

std::byte pattern_byte(int origin_rank, std::uint64_t offset) {
  // Mixes rank and offset so that shifted blocks, swapped ranks and repeats all differ.
  const std::uint64_t x =
      offset * 0x9e3779b1u + static_cast<std::uint64_t>(origin_rank) * 0x85ebca6bu;
  return static_cast<std::byte>((x ^ (x >> 13) ^ (offset >> 8)) & 0xff);
}

void fill_for_check(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                    std::span<std::byte> send, std::span<std::byte> recv,
                    const Reduction& reduction, std::span<const std::uint64_t> counts) {
  std::fill(recv.begin(), recv.end(), kPoison);
  if (!has_input(collective, rank, root)) return;
  std::span<std::byte> input = input_buffer(collective) == Buffer::Send ? send : recv;
  const std::uint64_t length = std::min<std::uint64_t>(
      input.size(),
      buffer_size(collective, input_buffer(collective), rank, ranks, root, size, counts));
  if (is_reduction(collective)) {
    fill_reduction_input(reduction, rank, input.first(length));
    return;
  }
  for (std::uint64_t i = 0; i < length; ++i) input[i] = pattern_byte(rank, i);
}

std::string check_result(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                         std::span<const std::byte> recv, const Reduction& reduction,
                         std::span<const std::uint64_t> counts) {
  for (const ExpectedPiece& piece : expected_result(collective, rank, ranks, root, size, counts)) {
    if (piece.reduced) {
      const std::string error =
          check_reduced(reduction, rank, piece.reduced_ranks, piece.origin_offset,
                        recv.subspan(piece.offset, piece.length));
      if (!error.empty()) return error;
      continue;
    }
    for (std::uint64_t i = 0; i < piece.length; ++i) {
      const std::byte expected = pattern_byte(piece.origin_rank, piece.origin_offset + i);
      const std::byte got = recv[piece.offset + i];
      if (got != expected) {
        return fmt::format(
            "rank {}: receive byte {} is 0x{:02x}, expected 0x{:02x} (byte {} of "
            "rank {}'s input)",
            rank, piece.offset + i, static_cast<unsigned>(got), static_cast<unsigned>(expected),
            piece.origin_offset + i, piece.origin_rank);
      }
    }
  }
  return {};
}

}  // namespace multilane::runtime
