// wan/stream_tag.hpp — the identity a WAN stream announces in its handshake.
//
// The handshake's 64-bit identity field (runtime/tcp/auth.hpp, covered by the proof) tells
// the accepting end which connection a stream belongs to: a random session number drawn by the
// connecting end for one path, the path's stream count and the stream's index. An acceptor
// groups streams by session (several clients of `multilane serve` may connect at once) and
// refuses a peer whose stream count differs from its own instead of hanging.
#pragma once

#include <cstdint>

namespace multilane::wan {

struct StreamTag {
  std::uint32_t session = 0;
  std::uint16_t count = 0;  // streams of the path
  std::uint16_t index = 0;  // this stream's position, 0..count-1
  friend bool operator==(const StreamTag&, const StreamTag&) = default;
};

constexpr std::uint64_t pack_tag(const StreamTag& tag) {
  return (std::uint64_t{tag.session} << 32) | (std::uint64_t{tag.count} << 16) | tag.index;
}

constexpr StreamTag unpack_tag(std::uint64_t bits) {
  return {static_cast<std::uint32_t>(bits >> 32), static_cast<std::uint16_t>(bits >> 16),
          static_cast<std::uint16_t>(bits)};
}

// A fresh random session number (libsodium).
std::uint32_t new_session();

}  // namespace multilane::wan
