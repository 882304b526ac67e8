// wan/route_header.hpp — what travels on the links of the aggregate-router network.
//
// Every chunk on a rank-router or router-router link is a 16-byte route header, the runtime's
// 64-byte frame header (runtime/tcp/wire.hpp: message id, offset, length, total) and the
// chunk's bytes. Route header, little-endian: u32 magic "1MLX", u16 source site, u16 destination
// site, u32 source rank, u32 destination rank (ranks are numbered within their site). A router
// forwards by the destination alone; the receiver writes the bytes at `offset` of message
// `message_id` from the source and counts them (aggregate-router paper, 3.2).
//
// Connections of this network carry a NodeIdentity in their handshake (runtime/tcp/auth.hpp):
// a rank (its site and rank) or a router (its site and index).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "runtime/tcp/wire.hpp"

namespace multilane::wan {

struct RankAddress {
  std::uint16_t site = 0;
  std::uint32_t rank = 0;
  friend auto operator<=>(const RankAddress&, const RankAddress&) = default;
};
std::string to_string(const RankAddress& address);  // "site 1 rank 3"

struct RoutedChunk {
  RankAddress from;
  RankAddress to;
  runtime::FrameHeader frame;
};

inline constexpr std::size_t kRouteHeaderSize = 16;
inline constexpr std::size_t kRoutedHeaderSize = kRouteHeaderSize + runtime::kFrameHeaderSize;
using RoutedHeaderBytes = std::array<std::byte, kRoutedHeaderSize>;

RoutedHeaderBytes encode_routed(const RoutedChunk& chunk);
// The route header's addresses, or what is wrong with its bytes (naming `peer`); the frame
// header after it is the frame reader's (runtime/tcp/frame_reader.hpp).
struct Route {
  RankAddress from;
  RankAddress to;
};
std::variant<Route, std::string> decode_route(std::span<const std::byte, kRouteHeaderSize> bytes,
                                              std::string_view peer);

enum class NodeKind : std::uint8_t { Rank = 1, Router = 2 };
struct NodeIdentity {
  NodeKind kind = NodeKind::Rank;
  std::uint16_t site = 0;
  std::uint32_t id = 0;  // the rank, or the router's index
  friend bool operator==(const NodeIdentity&, const NodeIdentity&) = default;
};
std::uint64_t pack_node(const NodeIdentity& node);
// The kind is returned as sent: callers refuse values other than Rank and Router.
NodeIdentity unpack_node(std::uint64_t bits);

}  // namespace multilane::wan
