// runtime/tcp/stripe.hpp — how one message is cut into chunks over K streams.
//
// Small messages (below the threshold, 32 KiB by default as in the aggregate-router paper)
// are not cut: striping them buys little and costs a header per stream. Larger messages are
// cut into n equal chunks (the last may be shorter), n the smallest multiple of K with chunks of
// at most max_chunk bytes, and chunk i goes to stream i mod K, so every stream carries the same
// share and a stream's chunks are spread over the whole message. The receiver never needs
// this plan: every chunk carries its offset. (This fixed plan is for senders that assign
// lanes up front, like the routed endpoints; a StreamSet hands its streams pieces as they can
// take them instead, chunk_feed.hpp.)
#pragma once

#include <cstdint>
#include <vector>

namespace multilane::runtime {

struct StripeOptions {
  std::uint64_t threshold = 32 * 1024;    // messages shorter than this use one stream
  std::uint64_t max_chunk = 1024 * 1024;  // bytes per chunk at most (striped messages)
};

struct Chunk {
  int stream = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  friend bool operator==(const Chunk&, const Chunk&) = default;
};

// Whether a `size`-byte message is cut over `streams` streams at all.
bool is_striped(std::uint64_t size, int streams, const StripeOptions& options);

// Chunks of a `size`-byte message over `streams` streams, in offset order. A message that is
// not cut goes whole to stream `single_stream` (callers rotate it so small messages spread);
// an empty message is one empty chunk, so that the receiver still sees it arrive.
std::vector<Chunk> plan_chunks(std::uint64_t size, int streams, const StripeOptions& options,
                               int single_stream = 0);

}  // namespace multilane::runtime
