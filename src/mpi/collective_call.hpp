// mpi/collective_call.hpp — one wrapped MPI collective call, translated into multilane's terms:
// the collective, the block size, the send and receive bytes, the root.
//
// Every argument MPI calls significant is read, and only those (a non-root's send arguments
// of MPI_Scatter may be garbage). MPI_IN_PLACE is served with copy semantics:
//   bcast       (never in place)
//   scatter     root's recvbuf = MPI_IN_PLACE: its block stays in sendbuf; it is received into
//               scratch and dropped
//   gather      root's sendbuf = MPI_IN_PLACE: its block is already in recvbuf; a copy is sent
//   allgather   sendbuf = MPI_IN_PLACE: this rank's block of recvbuf is the input (copied)
//   alltoall    sendbuf = MPI_IN_PLACE: recvbuf is the input (copied whole first)
//   reduce      root's sendbuf = MPI_IN_PLACE: recvbuf is its input (copied first)
//   allreduce   sendbuf = MPI_IN_PLACE: recvbuf is the input (copied first)
//   scan, exscan  sendbuf = MPI_IN_PLACE: recvbuf is the input (copied first); an exscan's
//               rank 0 receives nothing
//   reduce_scatter_block  sendbuf = MPI_IN_PLACE: recvbuf holds the size() blocks of input
//               (copied first) and gets the result in its first block
//   gatherv, scatterv, allgatherv  as gather, scatter, allgather, the blocks where the
//               displacements say
//   alltoallv   sendbuf = MPI_IN_PLACE: recvbuf with the receive counts and displacements is
//               the input (copied whole first)
//   reduce_scatter  sendbuf = MPI_IN_PLACE: recvbuf holds every rank's block of input
//               (copied first) and gets the result in its first block
// The v-forms run as multilane's v-collectives, whose schedule needs every rank's counts in
// bytes (counts()). Allgatherv's are the same everywhere; gatherv's and scatterv's are the
// root's, which prepare() broadcasts (PMPI_Bcast), and alltoallv's rows are each rank's own,
// which prepare() gathers (PMPI_Allgather): every rank then builds the same schedule.
// Reductions are served only for the predefined datatypes and operations that map
// (reduction_types.hpp).
// The call object owns whatever temporary buffers it needs and must live until the call
// completes; finish() then unpacks packed receive buffers (byte_buffer.hpp). One object may
// serve call after call (a communicator's blocking calls): its buffers keep their memory. A
// nonblocking call's object keeps its own duplicates of the datatypes it packs
// (`keeps_types`), since MPI lets a program free them before the wait.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "mpi/byte_buffer.hpp"
#include "mpi/displaced_buffer.hpp"
#include "mpi/wrapped_call.hpp"
#include "multilane/reduction.hpp"

namespace multilane::mpi {

struct MpiArgs {
  const void* sendbuf = nullptr;
  std::int64_t sendcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  void* recvbuf = nullptr;
  std::int64_t recvcount = 0;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  int root = 0;
  MPI_Op op = MPI_OP_NULL;  // reductions (their one count and datatype are in recvcount/type)
  // The v-forms: a count (elements) and a displacement (extents) per rank for each side; the
  // scalar sendcount/recvcount then hold this rank's own block's count where it has one.
  const int* sendcounts = nullptr;
  const int* sdispls = nullptr;
  const int* recvcounts = nullptr;
  const int* rdispls = nullptr;
};

struct CollectiveCall {
  WrappedCall call = WrappedCall::Barrier;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  MpiArgs args;
  std::uint64_t block = 0;   // multilane's size: the whole message of a bcast, one block else
  Reduction reduction;       // reductions: what is combined
  bool keeps_types = false;  // packed datatypes are duplicated until finish() (nonblocking)
  // A v-form run by an algorithm that reads only each rank's own counts
  // (AlgorithmInfo::own_counts_only): prepare() takes them from this rank's arguments, and none
  // travel. Set before prepare().
  bool own_counts_only = false;
  // A nonblocking v-form whose counts only some ranks know, on an algorithm that needs them
  // all: they travel on multilane's engine before the call starts there
  // (Communicator::irunv_sharing_counts()), so prepare() takes this rank's from its arguments,
  // as for own_counts_only. Set before prepare().
  bool counts_travel = false;
  // known_counts() exchanged this call's counts already, so prepare() does not again. Cleared by
  // describe_call().
  bool counts_exchanged = false;

  // Sets up the buffers (packing inputs, copying in-place inputs).
  void prepare();
  std::span<const std::byte> send() const { return send_; }
  std::span<std::byte> recv() const { return recv_; }
  // The v-forms, after prepare(): the bytes of each block (p, or p² for alltoallv).
  std::span<const std::uint64_t> counts() const { return counts_; }
  // The v-forms' counts before prepare(): exchanged now where their sizes are per rank
  // (collective: every rank of the call calls it); empty for the other calls.
  std::span<const std::uint64_t> known_counts();
  void finish();

  CollectiveCall() = default;
  CollectiveCall(const CollectiveCall&) = delete;
  CollectiveCall& operator=(const CollectiveCall&) = delete;

 private:
  void prepare_reduction();
  void prepare_v_form();
  void exchange_counts();
  void fill_own_counts();
  void fill_root_counts();
  void fill_own_row(std::uint64_t* row) const;
  ByteBuffer send_buffer_;
  ByteBuffer recv_buffer_;
  DisplacedBuffer send_blocks_;
  DisplacedBuffer recv_blocks_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::byte> scratch_;
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
};

// Fills `c` with the call of `rank` in an intra-communicator of `size` ranks when multilane may
// serve it, with `block` set; false when the arguments are ones the MPI library must judge (a
// negative count, a null datatype, a root out of range, MPI_IN_PLACE where MPI does not allow
// it) or a reduction multilane does not serve: PMPI_* then runs or reports it.
bool describe_call(WrappedCall call, MPI_Comm comm, const MpiArgs& args, int rank, int size,
                   CollectiveCall& c);

}  // namespace multilane::mpi
