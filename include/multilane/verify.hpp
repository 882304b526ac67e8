// multilane/verify.hpp — proves a schedule right (or says precisely why it is not).
//
// verify_schedule() executes a Schedule symbolically on a Platform and checks, in this order:
//
//   1. Structure: dependencies point to earlier operations of the same rank; peers are other
//      ranks in [0, p); every range lies inside its buffer (Send/Recv sizes from
//      collective.hpp, Scratch from Schedule::scratch_bytes); copies have equal, disjoint
//      ranges; nothing writes the Send buffer (it is the caller's input, read-only); an explicit
//      lane exists on the node of the rank that names it.
//   2. Matching: the k-th Send a->b matches the k-th Recv at b from a; counts, lengths and lanes
//      (equal, or one side kAnyLane, and the lane exists on both nodes) agree.
//   3. Ordering races, rank by rank and independent of any execution order: every read of a byte
//      (a Send, or a Copy's source) transitively depends on the operation that last wrote it,
//      and any two operations that write, or write and read, the same byte are ordered by
//      dependencies. Together with 2. this makes the outcome independent of timing.
//   4. Deadlock: execution under synchronous semantics (a transfer happens when both ends are
//      ready and the previous message on that ordered pair has been delivered). If it gets
//      stuck, one wait-for cycle is printed, operation by operation.
//   5. Data: which input bytes (origin rank, origin offset) every byte of every buffer holds,
//      as interval maps. A read of bytes nobody wrote yet is an error; at the end every Recv
//      buffer must equal expected_result() of the collective. For reductions the origin is the
//      set of ranks whose inputs an element combines: every output element must combine the
//      same input element of every rank, each exactly once (a rank counted twice, a missing
//      one, or elements of different offsets combined are errors), and with
//      VerifyOptions::commutative false, always in rank order (MPI's rule for such operations).
//      Reduction ranges must be whole elements (Schedule::element_size).
//
// A structural or matching error stops the checks that come after it (they would only report
// consequences). Errors are complete sentences naming rank, operation index, what was expected
// and what was found. Checking stops once VerifyOptions::max_errors have been found.
//
// Cost: O((ops + transfers) · log(runs)) time; memory linear in the schedule, plus at most one
// rank's reachability table (bounded) at a time. Thread-safe: no shared state.
//
// Example:
//   const VerifyReport report = verify_schedule(schedule, platform);
//   if (!report.ok()) fmt::print("{}\n", report.errors.front());
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

struct VerifyOptions {
  int max_errors = 8;  // stop after this many errors (>= 1)
  // Reductions: whether the operation may combine its operands in any order (every predefined
  // MPI operation may); false checks that every combination keeps rank order.
  bool commutative = true;
};

struct VerifyReport {
  std::vector<std::string> errors;  // at most max_errors, in the order found
  bool truncated = false;           // max_errors were found and checking stopped early
  std::uint64_t ops = 0;            // operations in the schedule
  std::uint64_t transfers = 0;      // matched send/recv pairs that were delivered
  bool ok() const { return errors.empty(); }
};

VerifyReport verify_schedule(const Schedule& schedule, const Platform& platform,
                             const VerifyOptions& options = {});

}  // namespace multilane
