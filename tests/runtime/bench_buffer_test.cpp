// BenchBuffer (runtime/check/bench_buffer.hpp): application memory where asked in its page, and
// SharedBuffers that the shared-memory layer finds as such.
#include "runtime/check/bench_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/shm/shared_regions.hpp"

namespace multilane::runtime {
namespace {

std::uintptr_t page_offset_of(std::span<std::byte> bytes) {
  return reinterpret_cast<std::uintptr_t>(bytes.data()) % 4096;
}

TEST(BenchBuffer, PlacesApplicationMemoryAtTheAskedPageOffset) {
  for (long offset : {0L, 16L, 2064L, 4095L}) {
    const BenchBuffer buffer(10'000, BenchMemory::Application, offset);
    EXPECT_EQ(buffer.bytes().size(), 10'000u);
    EXPECT_EQ(page_offset_of(buffer.bytes()), static_cast<std::uintptr_t>(offset));
    EXPECT_FALSE(shm::find_region(buffer.bytes().data()).has_value());
  }
}

TEST(BenchBuffer, SharedMemoryIsARegisteredSharedBufferOnAPageBoundary) {
  const BenchBuffer buffer(3000, BenchMemory::Shared, 100);
  EXPECT_EQ(buffer.bytes().size(), 3000u);
  EXPECT_EQ(page_offset_of(buffer.bytes()), 0u);  // a SharedBuffer ignores the offset
  const auto region = shm::find_region(buffer.bytes().data() + 2999);
  ASSERT_TRUE(region.has_value());
  EXPECT_EQ(region->offset, 2999u);
}

TEST(BenchBuffer, EmptyBuffersOfBothKindsHoldNoBytes) {
  EXPECT_TRUE(BenchBuffer(0, BenchMemory::Application).bytes().empty());
  EXPECT_TRUE(BenchBuffer(0, BenchMemory::Shared).bytes().empty());
}

}  // namespace
}  // namespace multilane::runtime
