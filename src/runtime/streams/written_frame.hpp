// runtime/streams/written_frame.hpp — which bytes of a frame a stream wrote the peer may not
// have yet, shared by the senders that re-send a stalled stream's share (StreamSet, the
// Engine's SendSide).
//
// A sender counts the bytes it ever handed to a stream's kernel and remembers each frame by
// where its payload ends in that count. The kernel's count of unacknowledged bytes
// (stream_progress.hpp) then splits the stream: the peer has every byte before
// delivered_end(), and a frame's payload after it is in doubt.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/streams/byte_ranges.hpp"

namespace multilane::runtime {

// The end of the bytes the peer acknowledged, in the stream's byte count.
inline std::uint64_t delivered_end(std::uint64_t handed, std::uint64_t unacknowledged) {
  return handed - std::min(unacknowledged, handed);
}

// The part of a frame's payload (`range` of the message, ending at `stream_end` of the stream's
// byte count) that lies after `delivered`: possibly empty, always the payload's end.
inline ByteRange doubtful_part(std::uint64_t stream_end, const ByteRange& range,
                               std::uint64_t delivered) {
  const std::uint64_t begin = stream_end - range.length;
  const std::uint64_t first = std::clamp(delivered, begin, stream_end);
  return {range.offset + (first - begin), stream_end - first};
}

}  // namespace multilane::runtime
