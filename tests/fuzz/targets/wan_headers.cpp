// tests/fuzz/targets/wan_headers.cpp — the WAN tools' fixed headers on any bytes: the route
// header of the aggregate-router network (wan/route_header.hpp) and the relay's request and
// reply (wan/relay_protocol.hpp). Each refuses with a sentence or decodes to what encodes
// back to the same thing; a relay reply accepted announces no more text than the limit.
//
// Input: 16 bytes of route header, 32 of relay request, 8 of relay reply, then text for a
// relay refusal (each part decoded when the input reaches it).
#include <string_view>

#include "fuzz/fuzz_check.hpp"
#include "wan/relay_protocol.hpp"
#include "wan/route_header.hpp"

using namespace multilane::wan;

namespace {

void check_route(const std::byte* bytes) {
  const auto decoded =
      decode_route(std::span<const std::byte, kRouteHeaderSize>(bytes, kRouteHeaderSize), "fuzz:1");
  if (const auto* why = std::get_if<std::string>(&decoded)) {
    FUZZ_CHECK(why->rfind("chunk from fuzz:1: ", 0) == 0, "a refusal names the peer");
    return;
  }
  const Route& route = std::get<Route>(decoded);
  const RoutedHeaderBytes again = encode_routed({.from = route.from, .to = route.to, .frame = {}});
  const auto round = decode_route(
      std::span<const std::byte, kRouteHeaderSize>(again.data(), kRouteHeaderSize), "fuzz:1");
  FUZZ_CHECK(std::holds_alternative<Route>(round), "an encoded route header decodes");
  FUZZ_CHECK(std::get<Route>(round).from == route.from && std::get<Route>(round).to == route.to,
             "a route header encodes back to its addresses");
}

void check_relay_request(const std::byte* bytes) {
  const auto decoded =
      decode_relay_request(std::span<const std::byte, kRelayRequestSize>(bytes, kRelayRequestSize));
  if (const auto* why = std::get_if<std::string>(&decoded)) {
    FUZZ_CHECK(!why->empty(), "a refused relay request says why");
    return;
  }
  const auto& target = std::get<asio::ip::tcp::endpoint>(decoded);
  FUZZ_CHECK(target.port() != 0, "a relay request names a port");
  const RelayRequestBytes again = encode_relay_request(target);
  const auto round = decode_relay_request(again);
  FUZZ_CHECK(std::holds_alternative<asio::ip::tcp::endpoint>(round) &&
                 std::get<asio::ip::tcp::endpoint>(round) == target,
             "a relay request encodes back to its target");
}

void check_relay_reply(const std::byte* bytes, std::string_view refusal) {
  const RelayReplyStart start = decode_relay_reply(
      std::span<const std::byte, kRelayReplyHeaderSize>(bytes, kRelayReplyHeaderSize));
  FUZZ_CHECK(!start.valid || start.text_length <= kRelayReplyTextLimit,
             "an accepted reply announces at most the limit of text");
  const std::string reply = encode_relay_reply(refusal);
  FUZZ_CHECK(reply.size() >= kRelayReplyHeaderSize, "a reply starts with its header");
  const RelayReplyStart round =
      decode_relay_reply(std::span<const std::byte, kRelayReplyHeaderSize>(
          reinterpret_cast<const std::byte*>(reply.data()), kRelayReplyHeaderSize));
  FUZZ_CHECK(round.valid && round.connected == refusal.empty(),
             "a reply decodes to connected exactly when nothing was refused");
  FUZZ_CHECK(round.text_length == reply.size() - kRelayReplyHeaderSize &&
                 round.text_length <= kRelayReplyTextLimit,
             "a reply's header gives its text's length, cut to the limit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  std::size_t at = 0;
  if (size < at + kRouteHeaderSize) return 0;
  check_route(bytes + at);
  at += kRouteHeaderSize;
  if (size < at + kRelayRequestSize) return 0;
  check_relay_request(bytes + at);
  at += kRelayRequestSize;
  if (size < at + kRelayReplyHeaderSize) return 0;
  check_relay_reply(
      bytes + at, std::string_view(reinterpret_cast<const char*>(data) + at + kRelayReplyHeaderSize,
                                   size - at - kRelayReplyHeaderSize));
  return 0;
}
