// runtime/tcp/stream_identity.hpp — who is at the other end of a connection.
//
// Sent in the handshake's identity field (auth.hpp) and covered by its proof: the rank that
// opened the connection, the lane it belongs to and its index among that lane's K streams.
#pragma once

#include <cstdint>

namespace multilane::runtime {

struct StreamIdentity {
  int rank = 0;
  int lane = 0;
  int stream = 0;
  friend bool operator==(const StreamIdentity&, const StreamIdentity&) = default;
};

constexpr std::uint64_t pack_identity(const StreamIdentity& id) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(id.rank)) << 32) |
         (static_cast<std::uint64_t>(static_cast<std::uint16_t>(id.lane)) << 16) |
         static_cast<std::uint16_t>(id.stream);
}

constexpr StreamIdentity unpack_identity(std::uint64_t bits) {
  return {static_cast<int>(static_cast<std::int32_t>(bits >> 32)),
          static_cast<int>(static_cast<std::uint16_t>(bits >> 16)),
          static_cast<int>(static_cast<std::uint16_t>(bits))};
}

}  // namespace multilane::runtime
