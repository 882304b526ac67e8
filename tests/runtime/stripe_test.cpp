// tests/runtime/stripe_test.cpp — the chunk plan covers the message exactly, evenly.
#include <gtest/gtest.h>

#include "runtime/tcp/stripe.hpp"

namespace multilane::runtime {
namespace {

// Chunks in offset order, contiguous, covering [0, size), with streams in range.
void expect_exact_cover(const std::vector<Chunk>& chunks, std::uint64_t size, int streams) {
  std::uint64_t next = 0;
  for (const Chunk& c : chunks) {
    EXPECT_EQ(c.offset, next);
    EXPECT_GE(c.stream, 0);
    EXPECT_LT(c.stream, streams);
    next += c.length;
  }
  EXPECT_EQ(next, size);
}

TEST(Stripe, SmallMessagesGoWholeToTheGivenStream) {
  const StripeOptions options;
  EXPECT_EQ(plan_chunks(32 * 1024 - 1, 4, options, 3), (std::vector<Chunk>{{3, 0, 32 * 1024 - 1}}));
  EXPECT_EQ(plan_chunks(0, 4, options, 2), (std::vector<Chunk>{{2, 0, 0}}));
  EXPECT_EQ(plan_chunks(1 << 30, 1, options), (std::vector<Chunk>{{0, 0, 1 << 30}}));
}

TEST(Stripe, LargeMessagesUseEveryStreamEvenly) {
  const StripeOptions options;
  const auto chunks = plan_chunks(1024 * 1024 + 3, 16, options);
  ASSERT_EQ(chunks.size(), 16u);
  expect_exact_cover(chunks, 1024 * 1024 + 3, 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(chunks[static_cast<std::size_t>(i)].stream, i);
}

TEST(Stripe, ChunksNeverExceedMaxChunk) {
  StripeOptions options;
  options.threshold = 1000;
  options.max_chunk = 1000;
  for (std::uint64_t size : {1000ull, 4097ull, 100'003ull}) {
    for (int k : {2, 3, 16}) {
      const auto chunks = plan_chunks(size, k, options);
      expect_exact_cover(chunks, size, k);
      for (const Chunk& c : chunks) EXPECT_LE(c.length, 1000u);
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        EXPECT_EQ(chunks[i].stream, static_cast<int>(i % static_cast<std::size_t>(k)));
      }
    }
  }
}

}  // namespace
}  // namespace multilane::runtime
