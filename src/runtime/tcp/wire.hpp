// runtime/tcp/wire.hpp — the header in front of every chunk of data on a TCP stream.
//
// A message (one Send of a schedule) travels as one or more chunks, possibly on different
// streams; each chunk is a FrameHeader followed by `length` bytes that belong at `offset` of
// the `total`-byte message. Because every chunk names its own offset, the receiver writes it
// straight into the posted buffer: no reorder buffer, no copy (aggregate-router paper, 3.2).
//
// Encoding: kFrameHeaderSize bytes, little-endian, fields in this order:
//   u32 magic, u16 version, u16 flags, u64 job_id, u64 sequence, u64 message_id,
//   u64 offset, u64 length, u64 total, u64 signature
// decode_frame_header() checks magic, version, job id, flags, the byte range and the size
// limit, and reports the first problem as a sentence naming the peer, e.g.
//   "frame from 127.0.0.1:4711: offset 900 + length 200 exceeds message length 1000".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace multilane::runtime {

inline constexpr std::uint32_t kFrameMagic = 0x464c4d31;  // "1MLF" on the wire
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kFrameHeaderSize = 4 + 2 + 2 + 7 * 8;

// Flag bits. kFrameStriped: the message was cut into several chunks (informational, lets a
// trace tell striped from single-chunk messages).
inline constexpr std::uint16_t kFrameStriped = 0x1;
// kFrameResent: a copy of bytes another stream also carries (a stalled stream's share sent
// again, docs/runtime.md); the receiver keeps whichever copy arrives first.
inline constexpr std::uint16_t kFrameResent = 0x2;
// kFrameAcknowledgeSoon: the sender waits for TCP's acknowledgement of the message's last
// bytes, so the receiver acknowledges at once when the message is complete.
inline constexpr std::uint16_t kFrameAcknowledgeSoon = 0x4;
inline constexpr std::uint16_t kKnownFrameFlags =
    kFrameStriped | kFrameResent | kFrameAcknowledgeSoon;

struct FrameHeader {
  std::uint16_t flags = 0;
  std::uint64_t job_id = 0;
  std::uint64_t sequence = 0;    // collective call number within the job
  std::uint64_t message_id = 0;  // per ordered pair of peers, counts up from 0
  std::uint64_t offset = 0;      // where this chunk's bytes go in the message
  std::uint64_t length = 0;      // bytes following this header
  std::uint64_t total = 0;       // bytes of the whole message
  // Fingerprint of the call the message belongs to (collective, algorithm, root, size, ...):
  // both ends compute it from their own arguments, so a mismatch is detected on arrival
  // instead of corrupting data. 0 for point-to-point messages.
  std::uint64_t signature = 0;
  friend bool operator==(const FrameHeader&, const FrameHeader&) = default;
};

using FrameBytes = std::array<std::byte, kFrameHeaderSize>;

// What a receiver accepts.
struct FrameCheck {
  std::uint64_t job_id = 0;
  std::uint64_t max_message = std::uint64_t{1} << 32;  // refuse bigger messages (4 GiB)
};

struct FrameDecode {
  std::optional<FrameHeader> header;  // set when valid
  std::string error;                  // set when not
};

FrameBytes encode_frame_header(const FrameHeader& header);
// `peer` ("host:port") only goes into the error text.
FrameDecode decode_frame_header(std::span<const std::byte, kFrameHeaderSize> bytes,
                                const FrameCheck& check, std::string_view peer);

}  // namespace multilane::runtime
