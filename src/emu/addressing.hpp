// emu/addressing.hpp — where every emulated lane lives on the wire.
//
// Lane l of node n (index inside its site) of site s gets
//   IPv4   198.18.0.0 + 4096·l + 256·s + n + 1, prefix /20 (one subnet per lane index: a rail)
//   MAC    02:6d:6c:ss:nn:ll (locally administered; "ml")
// so the site of any emulated address or MAC can be read back from it. The delay line uses
// that to forward only frames meant for the far site, which keeps a mesh of sites loop-free.
// Limits: 16 sites, 254 nodes per site, 32 lanes (the plan checks them).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace multilane::emu {

inline constexpr int kMaxSites = 16;
inline constexpr int kMaxNodesPerSite = 254;
inline constexpr int kMaxLanes = 32;
inline constexpr int kLanePrefixLength = 20;
inline constexpr std::uint32_t kEmuNetwork = 0xC6120000;  // 198.18.0.0/15
inline constexpr std::uint32_t kEmuNetworkMask = 0xFFFE0000;

using Mac = std::array<std::uint8_t, 6>;

// Host-order IPv4 address of a lane; arguments must be within the limits above.
std::uint32_t lane_ipv4(int site, int node_in_site, int lane);
Mac lane_mac(int site, int node_in_site, int lane);

std::string format_ipv4(std::uint32_t address);  // "198.18.0.1"
std::string format_mac(const Mac& mac);          // "02:6d:6c:00:00:01"

// The site of an emulated address / MAC, or nullopt when it is not one of ours.
std::optional<int> site_of_ipv4(std::uint32_t address);
std::optional<int> site_of_mac(const std::uint8_t* mac);

}  // namespace multilane::emu
