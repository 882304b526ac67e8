// tests/runtime/kept_bytes_test.cpp — the kept tail of a split send: what a re-send may take.
#include "runtime/tcp/kept_bytes.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace multilane::runtime {
namespace {

using Ranges = std::vector<ByteRange>;

TEST(KeptBytes, AReSendTakesOnlyWhatWasKeptAndReadsItBack) {
  std::vector<std::byte> message(1000);
  std::iota(reinterpret_cast<unsigned char*>(message.data()),
            reinterpret_cast<unsigned char*>(message.data()) + message.size(), 0);
  ByteRanges unacknowledged;
  unacknowledged.add(100, 100);  // [100, 200)
  unacknowledged.add(500, 50);   // [500, 550)
  const KeptBytes kept(message, unacknowledged);
  EXPECT_EQ(kept.bytes(), 150u);
  EXPECT_EQ(kept.message_size(), 1000u);

  // A doubtful range that straddles a kept one and what TCP already had: only the kept part.
  ByteRanges doubt;
  doubt.add(50, 100);   // [50, 150): kept from 100
  doubt.add(190, 320);  // [190, 510): kept [190, 200) and [500, 510)
  doubt.add(700, 10);   // none kept
  EXPECT_EQ(kept.kept_part(doubt).ranges(), (Ranges{{100, 50}, {190, 10}, {500, 10}}));

  for (const ByteRange& r : kept.kept_part(doubt).ranges()) {
    const auto bytes = kept.of(r);
    ASSERT_EQ(bytes.size(), r.length);
    EXPECT_EQ(bytes.front(), message[r.offset]);
    EXPECT_EQ(bytes.back(), message[r.end() - 1]);
  }
  EXPECT_THROW(kept.of({150, 100}), std::logic_error);
}

}  // namespace
}  // namespace multilane::runtime
