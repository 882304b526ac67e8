// wan/relay_protocol.hpp — what a client says to a `multilane relay` after authenticating.
//
// A relay forwards a connection only for a member of its job: the client first completes the
// ordinary handshake with the relay (runtime/tcp/auth.hpp, job secret), then sends a request
// naming the target; the relay connects to the target, authenticates to it with the same secret
// (passing on the client's identity) and answers. On success both connections are joined and
// every later byte is forwarded unchanged in both directions.
//
// Request, 32 bytes, little-endian: u32 magic "1MLR", u16 version 1, u16 address family
// (4 or 6), 16 address bytes (IPv4 in the first 4), u16 port, 6 bytes zero.
// Reply: u32 magic "1MLr", u16 status (0 connected, 1 refused), u16 length n (<= 1024), then n
// bytes of text saying why it was refused.
#pragma once

#include <array>
#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace multilane::wan {

inline constexpr std::size_t kRelayRequestSize = 32;
inline constexpr std::size_t kRelayReplyHeaderSize = 8;
inline constexpr std::size_t kRelayReplyTextLimit = 1024;

using RelayRequestBytes = std::array<std::byte, kRelayRequestSize>;
using RelayReplyHeader = std::array<std::byte, kRelayReplyHeaderSize>;

RelayRequestBytes encode_relay_request(const asio::ip::tcp::endpoint& target);
// The target, or the reason the bytes are no request.
std::variant<asio::ip::tcp::endpoint, std::string> decode_relay_request(
    std::span<const std::byte, kRelayRequestSize> bytes);

// Header and text of a reply; `refusal` empty means connected (the text is cut to the limit).
std::string encode_relay_reply(std::string_view refusal);
struct RelayReplyStart {
  bool valid = false;
  bool connected = false;
  std::size_t text_length = 0;
};
RelayReplyStart decode_relay_reply(std::span<const std::byte, kRelayReplyHeaderSize> bytes);

}  // namespace multilane::wan
