// runtime/tcp/stripe.cpp — the chunk plan of a message (see stripe.hpp).
#include "runtime/tcp/stripe.hpp"

#include <algorithm>

namespace multilane::runtime {

bool is_striped(std::uint64_t size, int streams, const StripeOptions& options) {
  return streams > 1 && size >= options.threshold && size >= static_cast<std::uint64_t>(streams);
}

std::vector<Chunk> plan_chunks(std::uint64_t size, int streams, const StripeOptions& options,
                               int single_stream) {
  if (!is_striped(size, streams, options)) {
    return {Chunk{single_stream, 0, size}};
  }
  const auto k = static_cast<std::uint64_t>(streams);
  const std::uint64_t max_chunk = std::max<std::uint64_t>(options.max_chunk, 1);
  const std::uint64_t at_least = (size + max_chunk - 1) / max_chunk;
  const std::uint64_t count = std::max<std::uint64_t>((at_least + k - 1) / k, 1) * k;
  const std::uint64_t chunk = (size + count - 1) / count;
  std::vector<Chunk> chunks;
  chunks.reserve(count);
  for (std::uint64_t i = 0, offset = 0; offset < size; ++i, offset += chunk) {
    chunks.push_back({static_cast<int>(i % k), offset, std::min(chunk, size - offset)});
  }
  return chunks;
}

}  // namespace multilane::runtime
