// copy_bytes: exact bytes whichever way it copies (the backward copy is checked on its own too,
// so also on CPUs that never take it), and backward exactly where 4K aliasing would slow this
// CPU's forward copy down.
#include "runtime/shm/copy_bytes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace multilane::runtime::shm {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::byte kGuard{0xEE};

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using PageMemory = std::unique_ptr<std::byte, FreeDeleter>;

// aligned_alloc wants a size that is a multiple of the alignment.
PageMemory page_aligned(std::size_t bytes) {
  const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  return PageMemory(static_cast<std::byte*>(std::aligned_alloc(kPage, rounded)));
}

TEST(CopyBytes, CopiesExactlyTheBytesAtManyAlignmentsAndLengths) {
  constexpr std::size_t kMost = 70'000;
  const PageMemory source = page_aligned(kMost + 2 * kPage);
  const PageMemory destination = page_aligned(kMost + 2 * kPage + 64);
  for (std::size_t i = 0; i < kMost + 2 * kPage; ++i) {
    source.get()[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  }
  for (const std::size_t length :
       {0u,    1u,    2u,    3u,    4u,    5u,    7u,    8u,      9u,     15u,  16u,
        17u,   31u,   32u,   33u,   63u,   64u,   65u,   100u,    127u,   128u, 129u,
        1000u, 2303u, 2304u, 2305u, 4095u, 4096u, 4097u, 65'536u, 69'999u}) {
    for (const std::size_t from : {0u, 16u, 100u, 4000u}) {
      for (const std::size_t to : {0u, 1u, 16u, 63u, 2047u, 2048u, 3000u, 4095u}) {
        std::byte* out = destination.get() + 32 + to;
        for (const auto copy : {&copy_bytes, &copy_bytes_backward}) {
          std::fill_n(destination.get(), kMost + 2 * kPage + 64, kGuard);
          copy(out, source.get() + from, length);
          const char* which = copy == &copy_bytes ? "copy_bytes" : "copy_bytes_backward";
          ASSERT_TRUE(std::equal(out, out + length, source.get() + from))
              << which << ": " << length << " bytes from offset " << from << " to offset " << to;
          ASSERT_EQ(out[-1], kGuard) << which << ": " << length << " " << from << " " << to;
          ASSERT_EQ(out[length], kGuard) << which << ": " << length << " " << from << " " << to;
        }
      }
    }
  }
}

// The chunked copy of small calls ends in a partial chunk of every length 0..31.
TEST(CopyBytes, CopiesEveryLengthUpToTheChunkedLimitExactly) {
  constexpr std::size_t kMost = kChunkedCopyLimit + 40;
  const PageMemory source = page_aligned(kMost + 64);
  const PageMemory destination = page_aligned(kMost + 128);
  for (std::size_t i = 0; i < kMost + 64; ++i) {
    source.get()[i] = static_cast<std::byte>((i * 37 + 11) % 253);
  }
  for (std::size_t length = 0; length <= kMost; ++length) {
    for (const std::size_t misalignment : {0u, 5u, 33u}) {
      std::byte* out = destination.get() + 64 + misalignment;
      const std::byte* in = source.get() + (misalignment * 3) % 64;
      std::fill_n(destination.get(), kMost + 128, kGuard);
      copy_bytes(out, in, length);
      ASSERT_TRUE(std::equal(out, out + length, in)) << length << " bytes, " << misalignment;
      ASSERT_EQ(out[-1], kGuard) << length << " bytes, " << misalignment;
      ASSERT_EQ(out[length], kGuard) << length << " bytes, " << misalignment;
    }
  }
}

TEST(CopyBytes, AliasedPairsHaveTheDestinationALittleAheadWithinAPage) {
  const PageMemory memory = page_aligned(16 * kPage);
  const std::byte* source = memory.get();
  std::byte* page = memory.get() + 8 * kPage;
  EXPECT_TRUE(aliased_forward(page + 16, source, 32 * 1024));  // a heap block's offset
  EXPECT_TRUE(aliased_forward(page + 2047, source, 4096));
  EXPECT_FALSE(aliased_forward(page, source, 32 * 1024));         // same offset in the page
  EXPECT_FALSE(aliased_forward(page + 2048, source, 32 * 1024));  // far enough ahead
  EXPECT_FALSE(aliased_forward(page + 4080, source, 32 * 1024));  // behind: loads run ahead
  EXPECT_FALSE(aliased_forward(page + 16, source, 4095));         // small: glibc's loops
  // Backward exactly for aliased pairs on a CPU whose forward copy they slow (AMD's), never
  // on the others.
  const bool cpu = cpu_copies_aliased_pairs_backward();
  EXPECT_EQ(copies_backward(page + 16, source, 32 * 1024), cpu);
  EXPECT_FALSE(copies_backward(page, source, 32 * 1024));
#if defined(__x86_64__)
  if (!__builtin_cpu_is("amd")) {
    EXPECT_FALSE(cpu) << "only AMD's rep movsb needs it";
  }
#endif
}

}  // namespace
}  // namespace multilane::runtime::shm
