// tests/shm/collective_data.hpp — inputs and exact expected outputs of a collective call.
//
// Inputs are bytes that depend on the rank, the position and a per-call seed, so a block that
// lands at the wrong place, from the wrong rank or from an earlier call shows. Expected results
// come from multilane/collective.hpp, the same definition the verifier and --check use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "multilane/schedule.hpp"
#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm::testing {

// The input buffer of `rank` for the call (Send, or Recv for bcast); empty without input.
std::vector<std::byte> input_of(Collective collective, int rank, int ranks, int root,
                                std::uint64_t size, std::uint32_t seed);

// The buffers one rank passes: `send` and `recv` sized by collective.hpp, the input filled in,
// the receive buffer poisoned with 0xee (bcast: the input is the receive buffer).
struct RankBuffers {
  std::vector<std::byte> send;
  std::vector<std::byte> recv;
};
RankBuffers buffers_of(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                       std::uint32_t seed);

// "" if `recv` is exactly what `rank` must hold after the call, else the first wrong byte.
std::string check_result(Collective collective, int rank, int ranks, int root, std::uint64_t size,
                         std::uint32_t seed, std::span<const std::byte> recv);

// Runs the call on `group` with fresh buffers and checks the result; "" when right.
std::string run_and_check(ShmGroup& group, Collective collective, int root, std::uint64_t size,
                          std::uint32_t seed, std::optional<ShmTuning> tuning = {});

}  // namespace multilane::runtime::shm::testing
