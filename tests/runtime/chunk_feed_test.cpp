// tests/runtime/chunk_feed_test.cpp — guided pieces cover the message exactly, shrink towards
// its end, and bytes given back go out first.
#include "runtime/tcp/chunk_feed.hpp"

#include <gtest/gtest.h>

namespace multilane::runtime {
namespace {

std::vector<ChunkFeed::Piece> drain(ChunkFeed& feed) {
  std::vector<ChunkFeed::Piece> pieces;
  while (auto piece = feed.next()) pieces.push_back(*piece);
  return pieces;
}

TEST(ChunkFeed, PiecesCoverTheMessageInOrderAndShrinkToTheSmallest) {
  for (std::uint64_t size : {1ull, 1000ull, 32ull * 1024, 1ull << 20, (32ull << 20) + 7}) {
    for (int streams : {2, 3, 16, 64}) {
      ChunkFeed feed(size, streams, 16 * 1024, 1 << 20);
      std::uint64_t next = 0;
      std::uint64_t previous = ~0ull;
      for (const auto& piece : drain(feed)) {
        EXPECT_EQ(piece.range.offset, next);
        EXPECT_FALSE(piece.resent);
        EXPECT_LE(piece.range.length, previous) << "size " << size << ", " << streams << " streams";
        EXPECT_LE(piece.range.length, 1u << 20);
        previous = piece.range.length;
        next += piece.range.length;
      }
      EXPECT_EQ(next, size);
      EXPECT_TRUE(feed.empty());
    }
  }
}

TEST(ChunkFeed, EachPieceIsTheRestOverTwiceTheStreams) {
  // 1 MiB over 4 streams: 128 KiB first, then 112 KiB (896 KiB / 8), 98 KiB, ...; never
  // below 16 KiB except for the very last bytes.
  ChunkFeed feed(1 << 20, 4, 16 * 1024, 1 << 20);
  EXPECT_EQ(feed.next()->range.length, 128u * 1024);
  EXPECT_EQ(feed.next()->range.length, 112u * 1024);
  EXPECT_EQ(feed.next()->range.length, 98u * 1024);
  const auto rest = drain(feed);
  ASSERT_GE(rest.size(), 2u);
  for (std::size_t i = 0; i + 1 < rest.size(); ++i) EXPECT_GE(rest[i].range.length, 16u * 1024);
  EXPECT_EQ(rest.back().range.offset + rest.back().range.length, 1u << 20);
}

TEST(ChunkFeed, LargeMessagesStartWithTheLargestPiece) {
  ChunkFeed feed(1ull << 30, 8, 16 * 1024, 1 << 20);
  EXPECT_EQ(feed.next()->range, (ByteRange{0, 1 << 20}));
  EXPECT_EQ(feed.remaining(), (1ull << 30) - (1 << 20));
}

TEST(ChunkFeed, BytesGivenBackGoFirstAndAreMarkedResent) {
  ChunkFeed feed(100'000, 2, 1000, 10'000);
  EXPECT_EQ(feed.next()->range, (ByteRange{0, 10'000}));
  EXPECT_EQ(feed.next()->range, (ByteRange{10'000, 10'000}));
  feed.give_back({{2'000, 1'500}, {15'000, 0}, {12'000, 500}});
  EXPECT_EQ(feed.remaining(), 80'000u + 2'000u);
  const auto first = feed.next();
  EXPECT_EQ(first->range, (ByteRange{2'000, 1'500}));
  EXPECT_TRUE(first->resent);
  const auto second = feed.next();
  EXPECT_EQ(second->range, (ByteRange{12'000, 500}));
  EXPECT_TRUE(second->resent);
  const auto third = feed.next();
  EXPECT_EQ(third->range.offset, 20'000u);
  EXPECT_FALSE(third->resent);
}

std::vector<std::uint64_t> lengths(const std::vector<ChunkFeed::Piece>& pieces) {
  std::vector<std::uint64_t> out;
  for (const auto& piece : pieces) out.push_back(piece.range.length);
  return out;
}

TEST(ChunkFeed, PiecesStayWithinTheSmallestAndLargest) {
  ChunkFeed feed(4'000, 1, 100, 1'000);  // half of the rest each time, within [100, 1000]
  EXPECT_EQ(lengths(drain(feed)),
            (std::vector<std::uint64_t>{1000, 1000, 1000, 500, 250, 125, 100, 25}));
}

TEST(ChunkFeed, GivenBackRangesAreCutByTheSameRule) {
  // 2 streams: a quarter of the rest each time, within [1000, 4000].
  ChunkFeed guided(0, 2, 1'000, 4'000);
  guided.give_back({{50'000, 10'000}});
  const auto pieces = drain(guided);
  EXPECT_EQ(lengths(pieces),
            (std::vector<std::uint64_t>{2500, 1875, 1407, 1055, 1000, 1000, 1000, 163}));
  for (const auto& piece : pieces) EXPECT_TRUE(piece.resent);
  EXPECT_EQ(pieces.front().range.offset, 50'000u);
}

TEST(ChunkFeed, AnEmptyFeedHandsOutNothing) {
  ChunkFeed feed;
  EXPECT_TRUE(feed.empty());
  EXPECT_FALSE(feed.next().has_value());
  ChunkFeed nothing(0, 4, 1, 100);
  EXPECT_TRUE(nothing.empty());
  EXPECT_FALSE(nothing.next().has_value());
}

}  // namespace
}  // namespace multilane::runtime
