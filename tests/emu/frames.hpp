// tests/emu/frames.hpp — Ethernet frames for the delay-line tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "emu/addressing.hpp"

namespace multilane::emu::testing {

// An IPv4 frame of `size` bytes (>= 18) from site `from` to node 0, lane 0 of site `to`,
// carrying `tag` in bytes 14..17.
inline std::vector<std::uint8_t> frame_to(int to, std::size_t size, std::uint32_t tag,
                                          int from = 0) {
  std::vector<std::uint8_t> f(size, 0x5a);
  const Mac dst = lane_mac(to, 0, 0);
  const Mac src = lane_mac(from, 1, 0);
  std::memcpy(f.data(), dst.data(), 6);
  std::memcpy(f.data() + 6, src.data(), 6);
  f[12] = 0x08;
  f[13] = 0x00;
  std::memcpy(f.data() + 14, &tag, 4);
  return f;
}

inline std::uint32_t tag_of(const std::vector<std::uint8_t>& f) {
  std::uint32_t tag;
  std::memcpy(&tag, f.data() + 14, 4);
  return tag;
}

// A broadcast ARP request for `target` (host order).
inline std::vector<std::uint8_t> arp_request(std::uint32_t target) {
  std::vector<std::uint8_t> f(42, 0);
  std::memset(f.data(), 0xff, 6);
  const Mac src = lane_mac(0, 0, 0);
  std::memcpy(f.data() + 6, src.data(), 6);
  f[12] = 0x08;
  f[13] = 0x06;
  for (int i = 0; i < 4; ++i) f[38 + i] = static_cast<std::uint8_t>(target >> (24 - 8 * i));
  return f;
}

}  // namespace multilane::emu::testing
