// mpi/repeated_call.hpp — a communicator's last blocking call that went to the MPI library,
// remembered so that the same call again goes there at once.
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

#include <atomic>
#include <cstdint>

#include "mpi/collective_call.hpp"

namespace multilane::mpi {

// Advanced by the wrapped MPI_Type_free and MPI_Op_free (handle_lifetimes.cpp).
std::atomic<std::uint64_t>& handle_generation();

class RepeatedCall {
 public:
  bool matches(WrappedCall call, const MpiArgs& args) const {
    return valid_ && call == call_ && same_route_arguments(args, args_) &&
           generation_ == handle_generation().load(std::memory_order_relaxed);
  }
  void remember(WrappedCall call, const MpiArgs& args) {
    call_ = call;
    args_ = args;
    generation_ = handle_generation().load(std::memory_order_relaxed);
    valid_ = true;
  }

 private:
  static bool same_route_arguments(const MpiArgs& a, const MpiArgs& b) {
    return a.recvcount == b.recvcount && a.recvtype == b.recvtype && a.sendcount == b.sendcount &&
           a.sendtype == b.sendtype && a.root == b.root && a.op == b.op &&
           (a.sendbuf == MPI_IN_PLACE) == (b.sendbuf == MPI_IN_PLACE) &&
           (a.recvbuf == MPI_IN_PLACE) == (b.recvbuf == MPI_IN_PLACE);
  }

  bool valid_ = false;
  WrappedCall call_ = WrappedCall::Barrier;
  MpiArgs args_;
  std::uint64_t generation_ = 0;
};

}  // namespace multilane::mpi
