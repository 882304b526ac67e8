// mpi/repeated_calls.hpp — a communicator's last few blocking calls that went to the MPI
// library, remembered so that the same call again goes there at once.
//
// Programs call one collective with the same arguments in a loop. Once such a call goes to the
// MPI library by a route that does not change (a class's decision, or a rule such as "no data"),
// the same call again needs no describing (type sizes, the reduction's mapping) and no class
// look-up: it costs a comparison of its arguments. "The same" is the same collective, counts,
// datatype and op handles, root and MPI_IN_PLACE flags; the buffers do not change a route.
//
// A handle names one datatype or op only until the program frees it (MPI may give the handle
// to a new one), so every MPI_Type_free and MPI_Op_free forgets every remembered call: they
// advance handle_generation(), which a remembered call must match.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "mpi/collective_call.hpp"

namespace multilane::mpi {

// Advanced by the wrapped MPI_Type_free and MPI_Op_free (handle_lifetimes.cpp).
std::atomic<std::uint64_t>& handle_generation();

// The last kRemembered distinct calls: a loop may interleave a few (OSU's validating loop
// calls MPI_Barrier between its timed calls), and each would push the other out of one entry.
class RepeatedCalls {
 public:
  static constexpr std::size_t kRemembered = 4;

  bool match(WrappedCall call, const MpiArgs& args) const {
    const std::uint64_t generation = handle_generation().load(std::memory_order_relaxed);
    for (const Entry& e : entries_) {
      if (e.valid && e.call == call && e.generation == generation &&
          same_route_arguments(args, e.args)) {
        return true;
      }
    }
    return false;
  }
  void remember(WrappedCall call, const MpiArgs& args) {
    entries_[next_] = {.valid = true,
                       .call = call,
                       .args = args,
                       .generation = handle_generation().load(std::memory_order_relaxed)};
    next_ = (next_ + 1) % kRemembered;
  }

 private:
  struct Entry {
    bool valid = false;
    WrappedCall call = WrappedCall::Barrier;
    MpiArgs args;
    std::uint64_t generation = 0;
  };
  static bool same_route_arguments(const MpiArgs& a, const MpiArgs& b) {
    return a.recvcount == b.recvcount && a.recvtype == b.recvtype && a.sendcount == b.sendcount &&
           a.sendtype == b.sendtype && a.root == b.root && a.op == b.op &&
           (a.sendbuf == MPI_IN_PLACE) == (b.sendbuf == MPI_IN_PLACE) &&
           (a.recvbuf == MPI_IN_PLACE) == (b.recvbuf == MPI_IN_PLACE);
  }

  std::array<Entry, kRemembered> entries_{};
  std::size_t next_ = 0;
};

}  // namespace multilane::mpi
