// bench/shm_floors.cpp — see shm_floors.hpp.
#include "shm_floors.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "multilane/errors.hpp"
#include "runtime/shm/cross_memory.hpp"
#include "runtime/shm/sync_word.hpp"

namespace multilane::shm_bench {
namespace {

std::span<const std::byte> block_of(std::span<const std::byte> buffer, int index,
                                    std::uint64_t size) {
  return buffer.subspan(static_cast<std::uint64_t>(index) * size, size);
}

std::span<std::byte> block_of(std::span<std::byte> buffer, int index, std::uint64_t size) {
  return buffer.subspan(static_cast<std::uint64_t>(index) * size, size);
}

void copy(std::span<const std::byte> from, std::span<std::byte> to) {
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size());
}

void world(int& rank, int& ranks) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
}

}  // namespace

// --- KernelCopyFloor ---

bool KernelCopyFloor::covers(Collective collective, std::uint64_t size, int ranks) {
  return (collective == Collective::Alltoall || collective == Collective::Allgather) && size > 0 &&
         ranks > 1;
}

KernelCopyFloor::KernelCopyFloor(Collective collective, std::uint64_t size,
                                 std::span<const std::byte> send)
    : collective_(collective), size_(size) {
  int ranks = 0;
  world(rank_, ranks);
  const SendBuffer mine{getpid(), reinterpret_cast<std::uintptr_t>(send.data())};
  senders_.resize(static_cast<std::size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, senders_.data(), sizeof mine, MPI_BYTE,
                MPI_COMM_WORLD);
}

// The rank's own block by memcpy, every other rank's block by one process_vm_readv from that
// rank's send buffer.
void KernelCopyFloor::run(std::span<const std::byte> send, std::span<std::byte> recv) const {
  // This rank's block in every sender's send buffer: its own in an alltoall, the only one in an
  // allgather.
  const int mine = collective_ == Collective::Alltoall ? rank_ : 0;
  for (int from = 0; from < static_cast<int>(senders_.size()); ++from) {
    const std::span<std::byte> into = block_of(recv, from, size_);
    if (from == rank_) {
      copy(block_of(send, mine, size_), into);
      continue;
    }
    const SendBuffer& sender = senders_[static_cast<std::size_t>(from)];
    const std::string error =
        runtime::shm::read_process_memory(static_cast<pid_t>(sender.pid),
                                          sender.address + static_cast<std::uint64_t>(mine) * size_,
                                          into.data(), size_)
            .error;
    if (!error.empty()) {
      throw CommunicationError(ErrorKind::resource, "shm_bench: kernel-copy floor: " + error);
    }
  }
}

// --- CacheLineFloor ---

// The number first, so that blocks of up to 56 bytes share its line. 128-byte aligned, so that
// the adjacent-line prefetcher never couples two mailboxes.
struct alignas(128) CacheLineFloor::Mailbox {
  std::uint64_t call;
  std::byte block[max_block];
};

// With more ranks than cores a poller holds the core its writer needs: no lower bound then.
bool CacheLineFloor::covers(Collective, std::uint64_t size, int ranks) {
  return size > 0 && size <= max_block && ranks > 1 && ranks <= sysconf(_SC_NPROCESSORS_ONLN);
}

CacheLineFloor::CacheLineFloor() {
  static_assert(sizeof(Mailbox) == 1024);
  world(rank_, ranks_);
  const auto count = static_cast<std::uint64_t>(ranks_) * static_cast<std::uint64_t>(ranks_);
  const MPI_Aint bytes =
      rank_ == 0 ? static_cast<MPI_Aint>((count + 1) * sizeof(Mailbox)) : MPI_Aint{0};
  void* mine = nullptr;
  if (MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &window_) !=
      MPI_SUCCESS) {
    throw CommunicationError(ErrorKind::resource,
                             "shm_bench: cache-line floor: MPI_Win_allocate_shared failed");
  }
  MPI_Aint size = 0;
  int unit = 0;
  void* base = nullptr;
  MPI_Win_shared_query(window_, 0, &size, &unit, &base);
  auto address = reinterpret_cast<std::uintptr_t>(base);
  address = (address + alignof(Mailbox) - 1) / alignof(Mailbox) * alignof(Mailbox);  // one spare
  mailboxes_ = reinterpret_cast<Mailbox*>(address);
  if (rank_ == 0) std::memset(static_cast<void*>(mailboxes_), 0, count * sizeof(Mailbox));
  MPI_Barrier(MPI_COMM_WORLD);
}

CacheLineFloor::~CacheLineFloor() {
  MPI_Win_free(&window_);
}

// The mailbox from `from` to `to`; mailbox(r, r) is the one of rank r that every receiver reads.
CacheLineFloor::Mailbox& CacheLineFloor::mailbox(int from, int to) const {
  return mailboxes_[from * ranks_ + to];
}

void CacheLineFloor::write(int to, std::span<const std::byte> block) const {
  Mailbox& into = mailbox(rank_, to);
  std::memcpy(into.block, block.data(), block.size());
  std::atomic_ref<std::uint64_t>(into.call).store(call_, std::memory_order_release);
}

void CacheLineFloor::read(int from, int to, std::span<std::byte> block) const {
  Mailbox& from_mailbox = mailbox(from, to);
  const std::atomic_ref<std::uint64_t> call(from_mailbox.call);
  // Polls with a pause; after the first thousands of polls it yields the core, so that more
  // ranks than cores still make progress, and it gives up after 10 s. The clock is read only
  // then: on the floor's own path it would cost as much as the line.
  constexpr std::uint64_t kPausedPolls = 4096;
  std::chrono::steady_clock::time_point deadline;
  for (std::uint64_t polls = 0; call.load(std::memory_order_acquire) != call_; ++polls) {
    if (polls < kPausedPolls) {
      runtime::shm::cpu_relax();
      continue;
    }
    if (polls == kPausedPolls)
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    sched_yield();
    if (polls % 1024 == 0 && std::chrono::steady_clock::now() > deadline) {
      throw CommunicationError(ErrorKind::timeout, "shm_bench: cache-line floor: rank " +
                                                       std::to_string(from) +
                                                       " wrote nothing within 10 s");
    }
  }
  std::memcpy(block.data(), from_mailbox.block, block.size());
}

void CacheLineFloor::run(Collective collective, std::uint64_t size, std::span<const std::byte> send,
                         std::span<std::byte> recv) {
  ++call_;
  const int root = 0;
  switch (collective) {
    case Collective::Bcast:  // bcast works in place in `recv`
      if (rank_ == root) {
        write(root, recv.first(size));
      } else {
        read(root, root, recv.first(size));
      }
      return;
    case Collective::Scatter:
      if (rank_ != root) return read(root, rank_, recv.first(size));
      for (int to = 0; to < ranks_; ++to) {
        if (to != root) write(to, block_of(send, to, size));
      }
      return copy(block_of(send, root, size), recv.first(size));
    case Collective::Gather:
      if (rank_ != root) return write(root, send.first(size));
      copy(send.first(size), block_of(recv, root, size));
      for (int from = 0; from < ranks_; ++from) {
        if (from != root) read(from, root, block_of(recv, from, size));
      }
      return;
    case Collective::Allgather:
      write(rank_, send.first(size));
      copy(send.first(size), block_of(recv, rank_, size));
      for (int from = 0; from < ranks_; ++from) {
        if (from != rank_) read(from, from, block_of(recv, from, size));
      }
      return;
    case Collective::Alltoall:
      for (int to = 0; to < ranks_; ++to) {
        if (to != rank_) write(to, block_of(send, to, size));
      }
      copy(block_of(send, rank_, size), block_of(recv, rank_, size));
      for (int from = 0; from < ranks_; ++from) {
        if (from != rank_) read(from, rank_, block_of(recv, from, size));
      }
      return;
    case Collective::Reduce:
    case Collective::Allreduce:
    case Collective::ReduceScatter:
    case Collective::Gatherv:
    case Collective::Scatterv:
    case Collective::Allgatherv:
    case Collective::Alltoallv:
    case Collective::Scan:
    case Collective::Exscan:
    case Collective::ReduceScatterv:
      throw std::invalid_argument(
          fmt::format("{} has no shared-memory group call to compare", to_string(collective)));
  }
}

}  // namespace multilane::shm_bench
