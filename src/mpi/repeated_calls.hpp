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
// advance the handle generation (pass_through_state.hpp), which a remembered call must match.
//
// The blocking and the nonblocking form of a collective are remembered apart. An entry is one
// cache line, and a match reads the entries in order until one matches: the pass-through reads
// this on every call, often with cold caches (pass_through_state.hpp).
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "mpi/collective_call.hpp"
#include "mpi/pass_through_state.hpp"

namespace multilane::mpi {

// The last kRemembered distinct calls: a loop may interleave a few (OSU's validating loop
// calls MPI_Barrier between its timed calls), and each would push the other out of one entry.
class RepeatedCalls {
 public:
  static constexpr std::size_t kRemembered = 4;

  [[gnu::always_inline]] bool match(WrappedCall call, bool nonblocking, const MpiArgs& args) const {
    const std::uint64_t generation =
        pass_through_state.handle_generation.load(std::memory_order_relaxed);
    const std::uint8_t form = form_of(call, nonblocking);
    for (const Entry& e : entries_) {
      if (e.same_route(form, args, generation)) return true;
    }
    return false;
  }
  void remember(WrappedCall call, bool nonblocking, const MpiArgs& args) {
    entries_[next_] = entry_of(form_of(call, nonblocking), args);
    next_ = (next_ + 1) % kRemembered;
  }

 private:
  // What decides a call's route: the collective, counts, datatype and op handles, root and
  // MPI_IN_PLACE flags; the buffers do not change a route.
  struct alignas(64) Entry {
    std::uint64_t generation = 0;
    std::int64_t sendcount = 0;
    std::int64_t recvcount = 0;
    MPI_Datatype sendtype = MPI_DATATYPE_NULL;
    MPI_Datatype recvtype = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    int root = 0;
    std::uint8_t form = kNone;  // form_of()
    bool send_in_place = false;
    bool recv_in_place = false;

    bool same_route(std::uint8_t f, const MpiArgs& a, std::uint64_t current) const {
      return form == f && generation == current && recvcount == a.recvcount &&
             recvtype == a.recvtype && sendcount == a.sendcount && sendtype == a.sendtype &&
             root == a.root && op == a.op && send_in_place == (a.sendbuf == MPI_IN_PLACE) &&
             recv_in_place == (a.recvbuf == MPI_IN_PLACE);
    }
  };
  static constexpr std::uint8_t kNonblocking = 0x80;
  static constexpr std::uint8_t kNone = 0xff;  // an entry not used yet
  static_assert(kWrappedCalls < kNonblocking);
  static_assert(sizeof(Entry) == 64);

  static std::uint8_t form_of(WrappedCall call, bool nonblocking) {
    return static_cast<std::uint8_t>(static_cast<std::uint8_t>(call) |
                                     (nonblocking ? kNonblocking : 0));
  }
  static Entry entry_of(std::uint8_t form, const MpiArgs& args) {
    return {.generation = pass_through_state.handle_generation.load(std::memory_order_relaxed),
            .sendcount = args.sendcount,
            .recvcount = args.recvcount,
            .sendtype = args.sendtype,
            .recvtype = args.recvtype,
            .op = args.op,
            .root = args.root,
            .form = form,
            .send_in_place = args.sendbuf == MPI_IN_PLACE,
            .recv_in_place = args.recvbuf == MPI_IN_PLACE};
  }

  std::array<Entry, kRemembered> entries_{};
  std::size_t next_ = 0;
};

}  // namespace multilane::mpi
