// runtime/data_check.hpp — the byte pattern of `--check` runs and its verification.
//
// Every input byte gets a value from (origin rank, offset), so a byte that lands in the wrong
// place, comes from the wrong rank or is missing shows. Receive buffers are poisoned first, so
// that bytes nobody wrote show too. The expected contents come from collective.hpp, never from
// an algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "multilane/schedule.hpp"

namespace multilane::runtime {

std::byte pattern_byte(int origin_rank, std::uint64_t offset);

// Fills this rank's input (the send buffer, or for bcast the root's receive buffer) with the
// pattern and poisons the rest of the receive buffer.
void fill_for_check(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                    std::span<std::byte> send, std::span<std::byte> recv);

// "" when `recv` holds exactly what the collective promises, else the first wrong byte:
// "rank 2: receive byte 4096 is 0x5a, expected 0x13 (byte 0 of rank 1's input)".
std::string check_result(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                         std::span<const std::byte> recv);

}  // namespace multilane::runtime
