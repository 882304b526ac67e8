// runtime/exec/chunk_combiner.hpp — a RecvReduce's receive: combines each chunk as it lands.
//
// The message arrives in a staging buffer, chunk by chunk, in any order (several streams); every
// chunk is combined into the destination as soon as it has landed, while it is still in the
// cache, so the reduction costs one pass over the data on top of the receive. Chunks are cut at
// byte offsets that need not fall on element boundaries: an element split between two chunks is
// combined when its last byte lands (the combiner counts the bytes of such elements). A message
// of up to kInlineBytes is staged in the combiner itself: a small reduction allocates nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "multilane/reduction.hpp"

namespace multilane::runtime {

class ChunkCombiner {
 public:
  static constexpr std::size_t kInlineBytes = 256;

  // `destination` is the accumulator (range = range (+) message); its size is the message's.
  ChunkCombiner(std::span<std::byte> destination, const Reduction& reduction);
  ChunkCombiner(const ChunkCombiner&) = delete;  // staging() may point into the object
  ChunkCombiner& operator=(const ChunkCombiner&) = delete;

  // Where the message is received.
  std::span<std::byte> staging() { return {staging_bytes(), destination_.size()}; }
  // Bytes [offset, offset+length) of staging() hold the message's data now.
  void landed(std::uint64_t offset, std::uint64_t length);

 private:
  std::byte* staging_bytes() {
    return heap_staging_ ? heap_staging_.get() : inline_staging_.data();
  }
  void combine(std::uint64_t first_element, std::uint64_t count);
  // Counts `bytes` more of the split element `index`; combines it once complete.
  void add_split(std::uint64_t index, std::uint64_t bytes);

  std::span<std::byte> destination_;
  Reduction reduction_;
  std::uint64_t element_;
  std::unique_ptr<std::byte[]> heap_staging_;           // a message over kInlineBytes
  std::array<std::byte, kInlineBytes> inline_staging_;  // not zero-filled: received before read
  std::unordered_map<std::uint64_t, std::uint64_t> split_bytes_;  // element -> bytes landed
};

}  // namespace multilane::runtime
