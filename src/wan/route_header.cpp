// wan/route_header.cpp — encoding of routed chunks and node identities (see route_header.hpp).
#include "wan/route_header.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/tcp/le_bytes.hpp"

namespace multilane::wan {

namespace {
constexpr std::uint32_t kRouteMagic = 0x584c4d31;  // "1MLX" on the wire
}

std::string to_string(const RankAddress& address) {
  return fmt::format("site {} rank {}", address.site, address.rank);
}

RoutedHeaderBytes encode_routed(const RoutedChunk& chunk) {
  RoutedHeaderBytes out{};
  std::size_t pos = 0;
  runtime::put_le<std::uint32_t>(out, pos, kRouteMagic);
  runtime::put_le<std::uint16_t>(out, pos, chunk.from.site);
  runtime::put_le<std::uint16_t>(out, pos, chunk.to.site);
  runtime::put_le<std::uint32_t>(out, pos, chunk.from.rank);
  runtime::put_le<std::uint32_t>(out, pos, chunk.to.rank);
  const runtime::FrameBytes frame = runtime::encode_frame_header(chunk.frame);
  std::copy(frame.begin(), frame.end(), out.begin() + kRouteHeaderSize);
  return out;
}

std::variant<Route, std::string> decode_route(std::span<const std::byte, kRouteHeaderSize> bytes,
                                              std::string_view peer) {
  std::size_t pos = 0;
  const auto magic = runtime::get_le<std::uint32_t>(bytes, pos);
  if (magic != kRouteMagic) {
    return fmt::format("chunk from {}: bad route magic 0x{:08x}", peer, magic);
  }
  Route route;
  route.from.site = runtime::get_le<std::uint16_t>(bytes, pos);
  route.to.site = runtime::get_le<std::uint16_t>(bytes, pos);
  route.from.rank = runtime::get_le<std::uint32_t>(bytes, pos);
  route.to.rank = runtime::get_le<std::uint32_t>(bytes, pos);
  return route;
}

std::uint64_t pack_node(const NodeIdentity& node) {
  return (std::uint64_t{static_cast<std::uint8_t>(node.kind)} << 56) |
         (std::uint64_t{node.site} << 32) | node.id;
}

NodeIdentity unpack_node(std::uint64_t bits) {
  const auto kind = static_cast<std::uint8_t>(bits >> 56);
  NodeIdentity node;
  node.kind = static_cast<NodeKind>(kind);
  node.site = static_cast<std::uint16_t>(bits >> 32);
  node.id = static_cast<std::uint32_t>(bits);
  return node;
}

}  // namespace multilane::wan
