#include "emu/addressing.hpp"

#include <fmt/format.h>

namespace multilane::emu {

namespace {
constexpr std::uint8_t kMacPrefix[3] = {0x02, 0x6d, 0x6c};
}

std::uint32_t lane_ipv4(int site, int node_in_site, int lane) {
  return kEmuNetwork + 4096u * static_cast<std::uint32_t>(lane) +
         256u * static_cast<std::uint32_t>(site) + static_cast<std::uint32_t>(node_in_site) + 1;
}

Mac lane_mac(int site, int node_in_site, int lane) {
  return {kMacPrefix[0],
          kMacPrefix[1],
          kMacPrefix[2],
          static_cast<std::uint8_t>(site),
          static_cast<std::uint8_t>(node_in_site),
          static_cast<std::uint8_t>(lane)};
}

std::string format_ipv4(std::uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

std::string format_mac(const Mac& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

std::optional<int> site_of_ipv4(std::uint32_t address) {
  if ((address & kEmuNetworkMask) != kEmuNetwork) return std::nullopt;
  const std::uint32_t host = address & 0xfff;  // low 12 bits: 256·site + node + 1
  const int site = static_cast<int>(host >> 8);
  const int node_plus_one = static_cast<int>(host & 0xff);
  if (node_plus_one == 0 || node_plus_one > kMaxNodesPerSite) return std::nullopt;
  return site;
}

std::optional<int> site_of_mac(const std::uint8_t* mac) {
  if (mac[0] != kMacPrefix[0] || mac[1] != kMacPrefix[1] || mac[2] != kMacPrefix[2]) {
    return std::nullopt;
  }
  if (mac[3] >= kMaxSites) return std::nullopt;
  return mac[3];
}

}  // namespace multilane::emu
