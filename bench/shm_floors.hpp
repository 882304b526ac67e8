// bench/shm_floors.hpp — the bare moves that any implementation of a collective on one node must
// make, with no protocol at all: the "floor" column of bench/shm_bench.cpp.
//
// Each floor is a lower bound for a family of implementations, so `Open MPI / floor` is the most
// that any member of that family could gain over Open MPI on this machine:
//
// - KernelCopyFloor (alltoall and allgather, blocks of any size): every rank copies its own
//   block with memcpy and reads every other rank's block with one process_vm_readv. Every
//   implementation that copies once through the kernel (CMA: Open MPI's vader, our single copy)
//   makes these moves.
// - CacheLineFloor (every collective, blocks of at most 1016 bytes): every sender writes its
//   block and the call's number into the fewest cache lines that hold both (one line up to 56
//   bytes), in memory the ranks share, and every receiver polls the number until it appears,
//   then copies the block out. Every implementation, whatever its protocol, must move the block
//   and a sign that it is there from the sender's core to the receiver's after the call starts;
//   this one moves exactly that. It polls, so it covers runs with at most one rank per core.
//
// Both are collective over MPI_COMM_WORLD (every rank constructs and runs them, root 0) and are
// correct only with the benchmark's barrier between two calls: the send buffers must be ready
// before anyone reads them, and a line must not be rewritten before it has been read. Making
// calls safe without that barrier is what a real implementation's protocol costs.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "multilane/collective.hpp"

namespace multilane::shm_bench {

class KernelCopyFloor {
 public:
  static bool covers(Collective collective, std::uint64_t size, int ranks);

  // Learns where every rank's send buffer is (an MPI_Allgather).
  KernelCopyFloor(Collective collective, std::uint64_t size, std::span<const std::byte> send);

  // Fills `recv` as the collective would; `send` is the buffer given to the constructor.
  void run(std::span<const std::byte> send, std::span<std::byte> recv) const;

 private:
  struct SendBuffer {
    std::int64_t pid = 0;
    std::uint64_t address = 0;
  };
  Collective collective_;
  std::uint64_t size_;
  int rank_ = 0;
  std::vector<SendBuffer> senders_;
};

class CacheLineFloor {
 public:
  // A mailbox holds the call's number (8 bytes) and the block, in 1 KiB.
  static constexpr std::uint64_t max_block = 1016;

  static bool covers(Collective collective, std::uint64_t size, int ranks);

  // Allocates the lines in memory the ranks share (MPI_Win_allocate_shared).
  CacheLineFloor();
  ~CacheLineFloor();
  CacheLineFloor(const CacheLineFloor&) = delete;
  CacheLineFloor& operator=(const CacheLineFloor&) = delete;

  // Fills `recv` as the collective would, root 0 (buffers as in multilane/collective.hpp).
  void run(Collective collective, std::uint64_t size, std::span<const std::byte> send,
           std::span<std::byte> recv);

 private:
  struct Mailbox;
  Mailbox& mailbox(int from, int to) const;
  void write(int to, std::span<const std::byte> block) const;
  void read(int from, int to, std::span<std::byte> block) const;

  MPI_Win window_ = MPI_WIN_NULL;
  Mailbox* mailboxes_ = nullptr;
  int rank_ = 0, ranks_ = 0;
  std::uint64_t call_ = 0;  // the number of the current call, the same on every rank
};

}  // namespace multilane::shm_bench
