// SharedBuffer (multilane/shared_buffer.hpp) and its use by the single copy: the memory itself,
// how a process finds its own regions (shared_regions.hpp) and maps another's
// (peer_regions.hpp), and collectives across processes on SharedBuffers: exact bytes, copied
// through the mapping rather than the kernel.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "multilane/collective.hpp"
#include "multilane/multilane.h"
#include "multilane/shared_buffer.hpp"
#include "runtime/shm/peer_regions.hpp"
#include "runtime/shm/shared_regions.hpp"
#include "runtime/shm/shm_group.hpp"
#include "shm/collective_data.hpp"
#include "shm/fork_ranks.hpp"

namespace multilane::runtime::shm {
namespace {

using testing::describe;
using testing::run_ranks;
using testing::unique_job_id;

TEST(SharedBuffer, IsZeroFilledPageAlignedAndRegistered) {
  SharedBuffer buffer(10'000);
  ASSERT_EQ(buffer.size(), 10'000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % sysconf(_SC_PAGESIZE), 0u);
  EXPECT_TRUE(std::all_of(buffer.bytes().begin(), buffer.bytes().end(),
                          [](std::byte b) { return b == std::byte{0}; }));
  const auto inside = find_region(buffer.data() + 4321);
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->offset, 4321u);
  EXPECT_GE(inside->fd, 0);
  int dummy = 0;
  EXPECT_FALSE(find_region(reinterpret_cast<const std::byte*>(&dummy)).has_value());
}

TEST(SharedBuffer, EmptyHoldsNothingAndMovesHandOver) {
  SharedBuffer empty(0);
  EXPECT_TRUE(empty.bytes().empty());
  EXPECT_EQ(empty.data(), nullptr);

  SharedBuffer a(100);
  std::byte* const memory = a.data();
  SharedBuffer b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(b.data(), memory);
  EXPECT_TRUE(find_region(memory).has_value());
  b = SharedBuffer(0);
  EXPECT_FALSE(find_region(memory).has_value());  // gone with the buffer
}

TEST(SharedBuffer, CApiAllocatesAndFreesEachBufferOnce) {
  void* memory = nullptr;
  ASSERT_EQ(ml_alloc_shared(1000, &memory), ML_OK);
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(find_region(static_cast<std::byte*>(memory) + 999).has_value());
  EXPECT_EQ(ml_free_shared(memory), ML_OK);
  EXPECT_FALSE(find_region(static_cast<std::byte*>(memory)).has_value());
  EXPECT_EQ(ml_free_shared(memory), ML_ERR_USAGE);
  EXPECT_STREQ(ml_last_error(),
               "ml_free_shared: the memory did not come from ml_alloc_shared (or was freed)");
  EXPECT_EQ(ml_free_shared(nullptr), ML_OK);
  ASSERT_EQ(ml_alloc_shared(0, &memory), ML_OK);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(ml_alloc_shared(1, nullptr), ML_ERR_USAGE);
  EXPECT_STREQ(ml_last_error(), "memory must not be NULL");
}

// Maps this process's own buffer a second time, as another rank would.
ExposedBuffer entry_for(const SharedBuffer& buffer, std::uint64_t at) {
  const auto region = find_region(buffer.data() + at);
  if (!region) throw std::logic_error("no region");
  return {reinterpret_cast<std::uintptr_t>(buffer.data() + at), static_cast<std::int32_t>(getpid()),
          region->fd, region->inode, region->offset};
}

TEST(PeerRegions, MapsTheOtherProcessesMemoryAndChecksBounds) {
  SharedBuffer buffer(8192);
  std::memcpy(buffer.data() + 100, "lanes", 5);
  PeerRegions peers;
  const ExposedBuffer entry = entry_for(buffer, 96);
  std::byte* mapped = peers.find(entry, 4, 5);
  ASSERT_NE(mapped, nullptr);
  EXPECT_NE(mapped, buffer.data() + 100);  // a mapping of its own
  EXPECT_EQ(std::memcmp(mapped, "lanes", 5), 0);
  std::memcpy(mapped, "LANES", 5);
  EXPECT_EQ(std::memcmp(buffer.data() + 100, "LANES", 5), 0);  // the same memory
  EXPECT_EQ(peers.mapped(), 1u);
  EXPECT_EQ(peers.find(entry, 4, 5), mapped);  // mapped once
  EXPECT_EQ(peers.mapped(), 1u);

  EXPECT_EQ(peers.find(entry, 8192 - 96 - 10, 11), nullptr);  // past the region's end
  EXPECT_NE(peers.find(entry, 8192 - 96 - 10, 10), nullptr);
  ExposedBuffer none = entry;
  none.region_fd = -1;
  EXPECT_EQ(peers.find(none, 0, 1), nullptr);  // not a SharedBuffer: the kernel copies
}

TEST(PeerRegions, AReusedDescriptorNumberIsNotMistakenForTheOldRegion) {
  PeerRegions peers;
  ExposedBuffer stale;
  {
    SharedBuffer old(4096);
    stale = entry_for(old, 0);
    ASSERT_NE(peers.find(stale, 0, 1), nullptr);
  }
  SharedBuffer fresh(4096);  // likely the same descriptor number, another inode
  const ExposedBuffer now = entry_for(fresh, 0);
  std::memcpy(fresh.data(), "new", 3);
  std::byte* mapped = peers.find(now, 0, 3);
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(std::memcmp(mapped, "new", 3), 0);

  ExposedBuffer wrong_inode = now;
  wrong_inode.region_inode += 1;
  PeerRegions others;
  EXPECT_EQ(others.find(wrong_inode, 0, 1), nullptr);
  EXPECT_EQ(others.mapped(), 0u);
}

// Every collective on SharedBuffers across processes: exact bytes, and the single copies went
// through the mappings (none through the kernel).
TEST(SharedBuffer, CollectivesCopyThroughTheMappingWithExactBytes) {
  for (const int p : {2, 3, 5}) {
    const std::uint64_t job = unique_job_id();
    const auto outcomes = run_ranks(p, [&](int rank) {
      ShmOptions options;
      options.timeout = std::chrono::seconds(5);
      options.single_copy = SingleCopyLimits::from_size(1);
      ShmGroup group(job, 0, rank, p, options);
      if (!group.single_copy_allowed()) return;  // nothing to map without cross-memory access
      std::uint32_t seed = 700;
      for (const Collective c : kGroupCollectives) {
        for (const std::uint64_t size : {1ull, 4097ull, 100'003ull}) {
          for (const int root : {0, p - 1}) {
            const auto input = testing::buffers_of(c, rank, p, root, size, ++seed);
            SharedBuffer send(input.send.size()), recv(input.recv.size());
            std::copy(input.send.begin(), input.send.end(), send.data());
            std::copy(input.recv.begin(), input.recv.end(), recv.data());
            group.run(c, send.bytes(), recv.bytes(), root);
            const std::string problem =
                testing::check_result(c, rank, p, root, size, seed, recv.bytes());
            if (!problem.empty()) throw std::runtime_error(problem);
          }
        }
      }
      const DirectCopies& copies = group.direct_copies();
      if (copies.kernel != 0 || copies.mapped == 0) {
        throw std::runtime_error("copies through the mapping: " + std::to_string(copies.mapped) +
                                 ", through the kernel: " + std::to_string(copies.kernel));
      }
    });
    for (const auto& outcome : outcomes)
      EXPECT_TRUE(outcome.ok()) << p << ": " << describe(outcomes);
    EXPECT_TRUE(list_segments(job).empty());
  }
}

// One rank's buffers shared, the other's plain: each copy takes the way its exposed buffer
// allows, and the bytes are the same.
TEST(SharedBuffer, MixedWithPlainBuffersKeepsEveryByte) {
  const std::uint64_t job = unique_job_id();
  const auto outcomes = run_ranks(2, [&](int rank) {
    ShmOptions options;
    options.timeout = std::chrono::seconds(5);
    options.single_copy = SingleCopyLimits::from_size(1);
    ShmGroup group(job, 0, rank, 2, options);
    if (!group.single_copy_allowed()) return;
    const std::uint64_t size = 50'001;
    auto input = testing::buffers_of(Collective::Alltoall, rank, 2, 0, size, 42);
    SharedBuffer send(input.send.size());
    std::copy(input.send.begin(), input.send.end(), send.data());
    const std::span<const std::byte> from =
        rank == 0 ? std::span<const std::byte>(send.bytes()) : input.send;
    group.run(Collective::Alltoall, from, input.recv, 0);
    const std::string problem =
        testing::check_result(Collective::Alltoall, rank, 2, 0, size, 42, input.recv);
    if (!problem.empty()) throw std::runtime_error(problem);
    const DirectCopies& copies = group.direct_copies();
    // Rank 1 reads rank 0's SharedBuffer; rank 0 reads rank 1's plain memory.
    if ((rank == 1) != (copies.mapped > 0) || (rank == 0) != (copies.kernel > 0)) {
      throw std::runtime_error("rank " + std::to_string(rank) + " copied the wrong way: mapped " +
                               std::to_string(copies.mapped) + ", kernel " +
                               std::to_string(copies.kernel));
    }
  });
  for (const auto& outcome : outcomes) EXPECT_TRUE(outcome.ok()) << describe(outcomes);
}

}  // namespace
}  // namespace multilane::runtime::shm
