// mpi/call_class.hpp — the class of a call: the calls of a communicator that share one route.
//
// A class is (collective, log2 of the bytes, and for reductions the element type and the
// operation), within one communicator, whose placement the tables it lives in are keyed by.
// The root does not change the class. Every input is one that MPI requires to agree on every
// rank of the call (the counts and types of both sides have equal signatures), so every rank
// puts a call in the same class: what keeps all ranks on one route.
//
// Bytes are multilane's block (collective_call.hpp): the whole message of a bcast, one rank's
// block otherwise, an allgatherv's largest block. Class c > 0 holds [2^(c-1), 2^c) bytes;
// class 0 holds empty calls. Gatherv, scatterv and alltoallv have no size every rank knows
// (wrapped_call.hpp: sizes_per_rank): each is one class of any size on its communicator.
#pragma once

#include <cstdint>
#include <string>

#include "mpi/wrapped_call.hpp"
#include "multilane/reduction.hpp"

namespace multilane::mpi {

struct CallClass {
  WrappedCall call = WrappedCall::Bcast;
  std::uint8_t bytes_log2 = 0;
  ElementType type = ElementType::Uint8;  // reductions only
  ReduceOp op = ReduceOp::Sum;            // reductions only

  // One 64-bit number per class, for the tables (and the tuning file's order).
  std::uint64_t key() const;
  static CallClass from_key(std::uint64_t key);
  friend bool operator==(const CallClass&, const CallClass&) = default;
};

// `reduction` is read for reductions only.
CallClass classify(WrappedCall call, std::uint64_t bytes, const Reduction& reduction);
// "MPI_Allreduce of 4-8 KiB of float, sum", "MPI_Bcast of 0 B", "MPI_Barrier".
std::string describe(const CallClass& c);
// The smallest byte count of the class (0 for class 0).
std::uint64_t lowest_bytes(const CallClass& c);

}  // namespace multilane::mpi
