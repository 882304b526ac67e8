// runtime/tcp/chunk_feed.hpp — hands a striped message's bytes to its streams as they can
// take them.
//
// Cut into K equal shares, a message is complete only when its slowest stream delivered its
// share, and K TCP streams sharing one bottleneck are far from equally fast: at 16-64 streams
// through a short queue, some streams get a fraction of the others' rate for many round trips.
// iperf3 -P K just adds up what every stream moves; a message channel can do the same by
// letting each stream take the next piece of the message when it has written its last one
// (work sharing), so a fast stream carries more of the message and a slow one less. The
// sender keeps the kernel's unsent queue of each stream short (TCP_NOTSENT_LOWAT, see
// StreamOptions::unsent_limit), so that "written" means "about to be sent".
//
// Pieces shrink as the message runs out (guided self-scheduling, Polychronopoulos and Kuck,
// 1987): each is ceil(remaining / 2K) bytes, at least `min_piece` and at most `max_piece`. The
// first pieces are large (few frames, few system calls); the last ones are small, so the
// message ends with every stream finishing about together instead of one stream still
// working through a large piece.
//
// Bytes given back (the doubtful share of a stalled stream, docs/runtime.md) go out before the
// rest, as pieces of the same rule, marked as re-sent.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"

namespace multilane::runtime {

// The smallest piece a stream is handed: a frame's header is then under 0.5% of it, and a
// stream at 15 Mbit/s (1 Gbit/s over 64 streams) sends it in about 9 ms, which bounds how long
// the last pieces keep a message waiting.
inline constexpr std::uint64_t kSmallestPiece = 16 * 1024;

// The unsent queue (TCP_NOTSENT_LOWAT) of each of `streams` streams that share messages this
// way: together they keep about 1 MiB written but not yet sent, enough to cover a few
// milliseconds of the sender's wake-up delay at 1 Gbit/s and more (each stream is refilled at
// half of its limit), and at least 32 KiB each. One stream has nobody to share with: 0, the
// system's default.
int shared_unsent_limit(int streams);

// The largest piece: no longer than a stream's unsent queue (when limited), since a stream that
// stalls owes the rest of the piece it started (the frame's header announced it) and writes it
// although its bytes may go out again on other streams; a short piece keeps that duplicate small.
std::uint64_t largest_piece(std::uint64_t max_chunk, int unsent_limit);

class ChunkFeed {
 public:
  struct Piece {
    ByteRange range;
    bool resent = false;  // given back, i.e. sent before on another stream
  };

  ChunkFeed() = default;  // empty
  // All `size` bytes of a message, for `streams` streams.
  ChunkFeed(std::uint64_t size, int streams, std::uint64_t min_piece, std::uint64_t max_piece);

  bool empty() const { return remaining_ == 0; }
  std::uint64_t remaining() const { return remaining_; }  // bytes not yet handed out
  // The next piece, or nothing when every byte was handed out.
  std::optional<Piece> next();
  // Hands these bytes out again, before the bytes never handed out.
  void give_back(const std::vector<ByteRange>& ranges);

 private:
  std::uint64_t piece_length() const;

  std::deque<ByteRange> given_back_;
  ByteRange fresh_;  // the bytes never handed out: always the message's tail
  std::uint64_t remaining_ = 0;
  std::uint64_t streams_ = 1;
  std::uint64_t min_piece_ = 1;
  std::uint64_t max_piece_ = UINT64_MAX;
};

}  // namespace multilane::runtime
