// runtime/transport/call_space.hpp — how the communicators that share one job keep their calls
// apart.
//
// Communicators over a job's ranks or some of them, in any order (an MPI program's MPI_Comm_dup
// and splits, runtime/api/job_sharing.hpp) can share one job: one engine, its threads, listeners
// and connections. Each has a call space of its own on each of its ranks, and a message's
// sequence number carries it in its top bits:
//
//   63      58 57                                               0
//   +---------+--------------------------------------------------+
//   |  space  |  call number (0: point to point, collectives 1..) |
//   +---------+--------------------------------------------------+
//
// So two communicators' calls never match each other's messages, and each space's calls end in
// order by themselves, whatever the other spaces do. Space 0 is the job's first communicator,
// whose sequence numbers are its call numbers.
#pragma once

#include <cstdint>
#include <string>

namespace multilane::runtime {

inline constexpr int kCallNumberBits = 58;
inline constexpr std::uint32_t kCallSpaces = 64;  // spaces of one job, 0 .. 63

constexpr std::uint64_t first_sequence(std::uint32_t space) {
  return std::uint64_t{space} << kCallNumberBits;
}
constexpr std::uint32_t space_of(std::uint64_t sequence) {
  return static_cast<std::uint32_t>(sequence >> kCallNumberBits);
}
constexpr std::uint64_t call_number(std::uint64_t sequence) {
  return sequence & (first_sequence(1) - 1);
}

// "#5" in space 0, "#5 of call space 3" in another: how messages and errors name a call.
std::string call_label(std::uint64_t sequence);

}  // namespace multilane::runtime
