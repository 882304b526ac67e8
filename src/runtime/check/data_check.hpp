// runtime/check/data_check.hpp — the byte pattern of `--check` runs and its verification.
//
// Every input byte gets a value from (origin rank, offset), so a byte that lands in the wrong
// place, comes from the wrong rank or is missing shows. Receive buffers are poisoned first, so
// that bytes nobody wrote show too. The expected contents come from collective.hpp, never from
// an algorithm.
//
// Reductions: every input element gets a value from (rank, element index) that suits the
// operation (small integers for sums of signed and floating-point types, so that every sum of
// up to thousands of ranks is exact in any order; 1 and -1 for products; 0, 1 and 5 for the
// logical operations; ties for minloc and maxloc), and the expected result is the reduction of
// every rank's input, computed here element by element in rank order: exact, so compared
// bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "multilane/reduction.hpp"
#include "multilane/schedule.hpp"

namespace multilane::runtime {

std::byte pattern_byte(int origin_rank, std::uint64_t offset);

// Fills this rank's input (the send buffer, or for bcast the root's receive buffer) with the
// pattern and poisons the rest of the receive buffer.
// `reduction` is read by reductions only, `counts` by the v-forms (collective.hpp).
void fill_for_check(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                    std::span<std::byte> send, std::span<std::byte> recv,
                    const Reduction& reduction = {}, std::span<const std::uint64_t> counts = {});

// "" when `recv` holds exactly what the collective promises, else the first wrong byte:
// "rank 2: receive byte 4096 is 0x5a, expected 0x13 (byte 0 of rank 1's input)", or for a
// reduction "rank 2: element 17 (receive bytes 68..71) is 12, expected 13 (the sum of element
// 17 over 5 ranks)".
std::string check_result(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                         std::span<const std::byte> recv, const Reduction& reduction = {},
                         std::span<const std::uint64_t> counts = {});

}  // namespace multilane::runtime
