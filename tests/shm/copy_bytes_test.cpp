// copy_bytes: exact bytes whichever way it copies, and backward exactly where 4K aliasing
// would slow a forward copy down.
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

bool cpu_has_avx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

TEST(CopyBytes, CopiesExactlyTheBytesAtManyAlignmentsAndLengths) {
  constexpr std::size_t kMost = 70'000;
  const PageMemory source = page_aligned(kMost + 2 * kPage);
  const PageMemory destination = page_aligned(kMost + 2 * kPage + 64);
  for (std::size_t i = 0; i < kMost + 2 * kPage; ++i) {
    source.get()[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  }
  int backward = 0;
  for (const std::size_t length :
       {0u,  1u,  2u,  3u,  4u,  5u,   7u,   8u,   9u,    15u,   16u,   17u,     31u,
        32u, 33u, 63u, 64u, 65u, 127u, 128u, 129u, 4095u, 4096u, 4097u, 65'536u, 69'999u}) {
    for (const std::size_t from : {0u, 16u, 100u, 4000u}) {
      for (const std::size_t to : {0u, 1u, 16u, 63u, 2047u, 2048u, 3000u, 4095u}) {
        std::byte* out = destination.get() + 32 + to;
        std::fill_n(destination.get(), kMost + 2 * kPage + 64, kGuard);
        backward += copies_backward(out, source.get() + from, length) ? 1 : 0;
        copy_bytes(out, source.get() + from, length);
        ASSERT_TRUE(std::equal(out, out + length, source.get() + from))
            << length << " bytes from offset " << from << " to offset " << to;
        ASSERT_EQ(out[-1], kGuard) << length << " " << from << " " << to;
        ASSERT_EQ(out[length], kGuard) << length << " " << from << " " << to;
      }
    }
  }
  if (cpu_has_avx2()) {
    EXPECT_GT(backward, 0);  // the backward copy itself was checked too
  }
}

TEST(CopyBytes, GoesBackwardOnlyWhenTheDestinationIsALittleAheadWithinAPage) {
  if (!cpu_has_avx2()) {
    GTEST_SKIP() << "this CPU has no AVX2: copy_bytes is memcpy";
  }
  const PageMemory memory = page_aligned(16 * kPage);
  const std::byte* source = memory.get();
  std::byte* page = memory.get() + 8 * kPage;
  EXPECT_TRUE(copies_backward(page + 16, source, 32 * 1024));  // a heap block's offset
  EXPECT_TRUE(copies_backward(page + 2047, source, 4096));
  EXPECT_FALSE(copies_backward(page, source, 32 * 1024));         // same offset in the page
  EXPECT_FALSE(copies_backward(page + 2048, source, 32 * 1024));  // far enough ahead
  EXPECT_FALSE(copies_backward(page + 4080, source, 32 * 1024));  // behind: loads run ahead
  EXPECT_FALSE(copies_backward(page + 16, source, 4095));         // small: glibc's loops
}

}  // namespace
}  // namespace multilane::runtime::shm
