#include "shm/collective_data.hpp"

#include <fmt/format.h>

#include "multilane/collective.hpp"

namespace multilane::runtime::shm::testing {
namespace {

std::byte pattern_byte(int rank, std::uint64_t at, std::uint32_t seed) {
  return static_cast<std::byte>(
      (at * 131 + (at >> 8) * 7 + static_cast<std::uint64_t>(rank) * 29 + seed * 61 + 1) & 0xff);
}

}  // namespace

std::vector<std::byte> input_of(Collective collective, int rank, int ranks, int root,
                                std::uint64_t size, std::uint32_t seed) {
  if (!has_input(collective, rank, root)) return {};
  std::vector<std::byte> bytes(
      buffer_size(collective, input_buffer(collective), rank, ranks, root, size));
  for (std::uint64_t i = 0; i < bytes.size(); ++i) bytes[i] = pattern_byte(rank, i, seed);
  return bytes;
}

RankBuffers buffers_of(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                       std::uint32_t seed) {
  RankBuffers buffers;
  buffers.recv.assign(buffer_size(collective, Buffer::Recv, rank, ranks, root, size),
                      std::byte{0xee});
  auto input = input_of(collective, rank, ranks, root, size, seed);
  if (input_buffer(collective) == Buffer::Recv) {
    if (!input.empty()) buffers.recv = std::move(input);
  } else {
    buffers.send = std::move(input);
    buffers.send.resize(buffer_size(collective, Buffer::Send, rank, ranks, root, size));
  }
  return buffers;
}

std::string check_result(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                         std::uint32_t seed, std::span<const std::byte> recv) {
  for (const ExpectedPiece& piece : expected_result(collective, rank, ranks, root, size)) {
    const auto origin = input_of(collective, piece.origin_rank, ranks, root, size, seed);
    for (std::uint64_t i = 0; i < piece.length; ++i) {
      const std::byte want = origin[piece.origin_offset + i];
      const std::byte got = recv[piece.offset + i];
      if (got != want) {
        return fmt::format(
            "{} of {} B, {} ranks, root {}, seed {}: rank {} byte {} is {:#04x}, expected "
            "{:#04x} (byte {} of rank {}'s input)",
            to_string(collective), size, ranks, root, seed, rank, piece.offset + i,
            static_cast<int>(got), static_cast<int>(want), piece.origin_offset + i,
            piece.origin_rank);
      }
    }
  }
  return {};
}

std::string run_and_check(ShmGroup& group, Collective collective, int root, std::uint64_t size,
                          std::uint32_t seed, std::optional<ShmTuning> tuning) {
  const int rank = group.local_rank();
  const int ranks = group.local_size();
  RankBuffers buffers = buffers_of(collective, rank, ranks, root, size, seed);
  group.run(collective, buffers.send, buffers.recv, root, tuning);
  return check_result(collective, rank, ranks, root, size, seed, buffers.recv);
}

}  // namespace multilane::runtime::shm::testing
