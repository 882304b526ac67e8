// runtime/tcp/written_frame.hpp — which bytes of a frame a stream wrote the peer may not
// have yet, for the striped sender's re-send of a stalled stream's share (striped_sender.hpp).
//
// A sender counts the bytes it ever handed to a stream's kernel and remembers each frame by
// where its payload ends in that count. The kernel's count of unacknowledged bytes
// (stream_progress.hpp) then splits the stream: the peer has every byte before
// delivered_end(), and a frame's payload after it is in doubt.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"

namespace multilane::runtime {

// A frame that went to the kernel and may not be acknowledged yet: its payload, `range` of
// the message, ends at `stream_end` of the stream's byte count. `Message` says whose it is:
// the striped sender's message.
template <typename Message>
struct WrittenFrame {
  std::uint64_t stream_end = 0;
  ByteRange range;
  Message message{};
};

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

// Takes the frames of `written` that `mine` selects (they are to go out again) and returns the
// part of their payloads the peer may not have: what lies after `delivered` in the stream's
// byte count. `has(range)` hears of the part of each the peer has.
template <typename Message, typename Mine, typename Has>
ByteRanges take_doubt(std::vector<WrittenFrame<Message>>& written, std::uint64_t delivered,
                      Mine mine, Has has) {
  ByteRanges doubt;
  std::erase_if(written, [&](const WrittenFrame<Message>& w) {
    if (!mine(w)) return false;
    const ByteRange doubtful = doubtful_part(w.stream_end, w.range, delivered);
    has(ByteRange{w.range.offset, doubtful.offset - w.range.offset});
    doubt.add(doubtful);
    return true;
  });
  return doubt;
}

// Forgets the frames of `written` the peer acknowledged (their payload ends at or before
// `acknowledged` in the stream's byte count), calling `has(frame)` for each, and those `stale`
// selects (their message ended).
template <typename Message, typename Stale, typename Has>
void forget_acknowledged(std::vector<WrittenFrame<Message>>& written, std::uint64_t acknowledged,
                         Stale stale, Has has) {
  std::erase_if(written, [&](const WrittenFrame<Message>& w) {
    if (w.stream_end <= acknowledged) {
      has(w);
      return true;
    }
    return stale(w);
  });
}

// What is left of a frame whose write stopped after `written` bytes: the rest of its header,
// then the rest of its payload, copied, since the peer's reader expects the whole frame and the
// caller's buffer goes back to the caller.
inline std::vector<std::byte> frame_rest(std::span<const std::byte> header,
                                         std::span<const std::byte> payload, std::size_t written) {
  const std::size_t header_written = std::min(written, header.size());
  std::vector<std::byte> rest(header.begin() + static_cast<std::ptrdiff_t>(header_written),
                              header.end());
  const auto payload_rest = payload.subspan(written - header_written);
  rest.insert(rest.end(), payload_rest.begin(), payload_rest.end());
  return rest;
}

}  // namespace multilane::runtime
