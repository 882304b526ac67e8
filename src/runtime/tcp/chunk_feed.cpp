// runtime/tcp/chunk_feed.cpp — guided pieces of a message (see chunk_feed.hpp).
#include "runtime/tcp/chunk_feed.hpp"

#include <algorithm>

namespace multilane::runtime {

int shared_unsent_limit(int streams) {
  if (streams < 2) return 0;
  return std::clamp((1 << 20) / streams, 32 << 10, 256 << 10);
}

std::uint64_t largest_piece(std::uint64_t max_chunk, int unsent_limit) {
  const auto limit = static_cast<std::uint64_t>(std::max(unsent_limit, 0));
  return limit > 0 ? std::min(max_chunk, limit) : max_chunk;
}

ChunkFeed::ChunkFeed(std::uint64_t size, int streams, std::uint64_t min_piece,
                     std::uint64_t max_piece)
    : fresh_{0, size},
      remaining_(size),
      streams_(static_cast<std::uint64_t>(std::max(streams, 1))),
      max_piece_(std::max<std::uint64_t>(max_piece, 1)) {
  min_piece_ = std::clamp<std::uint64_t>(min_piece, 1, max_piece_);
}

std::uint64_t ChunkFeed::piece_length() const {
  const std::uint64_t guided = (remaining_ + 2 * streams_ - 1) / (2 * streams_);
  return std::clamp(guided, min_piece_, max_piece_);
}

std::optional<ChunkFeed::Piece> ChunkFeed::next() {
  if (remaining_ == 0) return std::nullopt;
  const std::uint64_t want = piece_length();
  const bool resent = !given_back_.empty();
  ByteRange& source = resent ? given_back_.front() : fresh_;
  const ByteRange piece{source.offset, std::min(want, source.length)};
  source.offset += piece.length;
  source.length -= piece.length;
  remaining_ -= piece.length;
  if (resent && source.length == 0) given_back_.pop_front();
  return Piece{piece, resent};
}

void ChunkFeed::give_back(const std::vector<ByteRange>& ranges) {
  for (const ByteRange& r : ranges) {
    if (r.length == 0) continue;
    given_back_.push_back(r);
    remaining_ += r.length;
  }
}

}  // namespace multilane::runtime
