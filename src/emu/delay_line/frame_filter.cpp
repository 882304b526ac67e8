#include "emu/delay_line/frame_filter.hpp"

#include "emu/addressing.hpp"

namespace multilane::emu {

namespace {
constexpr std::size_t kEthernetHeader = 14;
constexpr std::size_t kArpTargetAddress = kEthernetHeader + 24;
constexpr std::uint16_t kEtherTypeArp = 0x0806;

bool is_broadcast(const std::uint8_t* mac) {
  for (int i = 0; i < 6; ++i) {
    if (mac[i] != 0xff) return false;
  }
  return true;
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
}  // namespace

bool frame_for_site(const std::uint8_t* frame, std::size_t len, int site) {
  if (len < kEthernetHeader) return false;
  const std::uint8_t* destination = frame;
  if ((destination[0] & 1) == 0) return site_of_mac(destination) == site;  // unicast
  if (!is_broadcast(destination)) return false;                            // multicast
  const std::uint16_t ether_type = static_cast<std::uint16_t>(frame[12] << 8 | frame[13]);
  if (ether_type != kEtherTypeArp || len < kArpTargetAddress + 4) return false;
  return site_of_ipv4(read_be32(frame + kArpTargetAddress)) == site;
}

}  // namespace multilane::emu
