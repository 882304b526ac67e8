// wan/relay_protocol.cpp — encoding of relay requests and replies (see relay_protocol.hpp).
#include "wan/relay_protocol.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/tcp/le_bytes.hpp"

namespace multilane::wan {

namespace {
constexpr std::uint32_t kRequestMagic = 0x524c4d31;  // "1MLR" on the wire
constexpr std::uint32_t kReplyMagic = 0x724c4d31;    // "1MLr" on the wire
constexpr std::uint16_t kVersion = 1;
}  // namespace

using runtime::get_le;
using runtime::put_le;

RelayRequestBytes encode_relay_request(const asio::ip::tcp::endpoint& target) {
  RelayRequestBytes out{};
  std::size_t pos = 0;
  put_le<std::uint32_t>(out, pos, kRequestMagic);
  put_le<std::uint16_t>(out, pos, kVersion);
  const auto address = target.address();
  put_le<std::uint16_t>(out, pos, address.is_v4() ? 4 : 6);
  if (address.is_v4()) {
    const auto bytes = address.to_v4().to_bytes();
    std::transform(bytes.begin(), bytes.end(), out.begin() + pos,
                   [](unsigned char b) { return std::byte{b}; });
  } else {
    const auto bytes = address.to_v6().to_bytes();
    std::transform(bytes.begin(), bytes.end(), out.begin() + pos,
                   [](unsigned char b) { return std::byte{b}; });
  }
  pos += 16;
  put_le<std::uint16_t>(out, pos, target.port());
  return out;
}

std::variant<asio::ip::tcp::endpoint, std::string> decode_relay_request(
    std::span<const std::byte, kRelayRequestSize> bytes) {
  std::size_t pos = 0;
  const auto magic = get_le<std::uint32_t>(bytes, pos);
  const auto version = get_le<std::uint16_t>(bytes, pos);
  const auto family = get_le<std::uint16_t>(bytes, pos);
  if (magic != kRequestMagic) return fmt::format("not a relay request (bad magic 0x{:08x})", magic);
  if (version != kVersion)
    return fmt::format("relay request version {}, expected {}", version, kVersion);
  if (family != 4 && family != 6) return fmt::format("relay request for address family {}", family);
  asio::ip::address address;
  if (family == 4) {
    asio::ip::address_v4::bytes_type v4{};
    for (std::size_t i = 0; i < v4.size(); ++i) v4[i] = static_cast<unsigned char>(bytes[pos + i]);
    address = asio::ip::address_v4(v4);
  } else {
    asio::ip::address_v6::bytes_type v6{};
    for (std::size_t i = 0; i < v6.size(); ++i) v6[i] = static_cast<unsigned char>(bytes[pos + i]);
    address = asio::ip::address_v6(v6);
  }
  pos += 16;
  const auto port = get_le<std::uint16_t>(bytes, pos);
  if (port == 0) return std::string("relay request for port 0");
  return asio::ip::tcp::endpoint(address, port);
}

std::string encode_relay_reply(std::string_view refusal) {
  const std::string_view text = refusal.substr(0, kRelayReplyTextLimit);
  RelayReplyHeader header{};
  std::size_t pos = 0;
  put_le<std::uint32_t>(header, pos, kReplyMagic);
  put_le<std::uint16_t>(header, pos, refusal.empty() ? 0 : 1);
  put_le<std::uint16_t>(header, pos, static_cast<std::uint16_t>(text.size()));
  std::string out(reinterpret_cast<const char*>(header.data()), header.size());
  out += text;
  return out;
}

RelayReplyStart decode_relay_reply(std::span<const std::byte, kRelayReplyHeaderSize> bytes) {
  std::size_t pos = 0;
  const auto magic = get_le<std::uint32_t>(bytes, pos);
  const auto status = get_le<std::uint16_t>(bytes, pos);
  const auto length = get_le<std::uint16_t>(bytes, pos);
  if (magic != kReplyMagic || status > 1 || length > kRelayReplyTextLimit) return {};
  return {true, status == 0, length};
}

}  // namespace multilane::wan
