// tests/emu/window_clamp_test.cpp — the delay line's TCP window cap: scaled and unscaled
// windows, handshakes in both directions, checksums still valid, other traffic untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "emu/delay_line/window_clamp.hpp"

namespace multilane::emu {
namespace {

constexpr std::uint8_t kSyn = 0x02, kAck = 0x10, kFin = 0x01;

struct Endpoint {
  std::uint32_t ip;
  std::uint16_t port;
};

void put16(std::vector<std::uint8_t>& f, std::size_t at, std::uint16_t v) {
  f[at] = static_cast<std::uint8_t>(v >> 8);
  f[at + 1] = static_cast<std::uint8_t>(v);
}
void put32(std::vector<std::uint8_t>& f, std::size_t at, std::uint32_t v) {
  put16(f, at, static_cast<std::uint16_t>(v >> 16));
  put16(f, at + 2, static_cast<std::uint16_t>(v));
}
std::uint16_t get16(const std::vector<std::uint8_t>& f, std::size_t at) {
  return static_cast<std::uint16_t>(f[at] << 8 | f[at + 1]);
}

// The TCP checksum over the pseudo-header and segment, with the checksum field as is: 0 when
// the field is right.
std::uint16_t tcp_checksum(const std::vector<std::uint8_t>& f) {
  const std::size_t tcp = 34, tcp_len = f.size() - tcp;
  std::uint32_t sum = get16(f, 26) + get16(f, 28) + get16(f, 30) + get16(f, 32) + 6 +
                      static_cast<std::uint32_t>(tcp_len);
  for (std::size_t i = tcp; i + 1 < f.size(); i += 2) sum += get16(f, i);
  if (tcp_len % 2) sum += std::uint32_t{f.back()} << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

// An Ethernet + IPv4 + TCP frame; `scale` >= 0 adds a window-scale option; 10 payload bytes.
std::vector<std::uint8_t> segment(Endpoint from, Endpoint to, std::uint8_t flags,
                                  std::uint16_t window, int scale = -1) {
  const std::size_t options = scale >= 0 ? 4 : 0;
  std::vector<std::uint8_t> f(14 + 20 + 20 + options + 10, 0);
  f[12] = 0x08;
  f[14] = 0x45;
  put16(f, 16, static_cast<std::uint16_t>(f.size() - 14));
  f[22] = 64;
  f[23] = 6;
  put32(f, 26, from.ip);
  put32(f, 30, to.ip);
  put16(f, 34, from.port);
  put16(f, 36, to.port);
  f[46] = static_cast<std::uint8_t>((20 + options) / 4 << 4);
  f[47] = flags;
  put16(f, 48, window);
  if (scale >= 0) {
    f[54] = 1;  // NOP
    f[55] = 3;
    f[56] = 3;
    f[57] = static_cast<std::uint8_t>(scale);
  }
  for (std::size_t i = 54 + options; i < f.size(); ++i) f[i] = static_cast<std::uint8_t>(i * 7);
  put16(f, 50, tcp_checksum(f));
  return f;
}

const Endpoint kClient{0xC6120001, 40000}, kServer{0xC6120101, 5201};

TEST(WindowClamp, ScaledWindowsAreCappedAndChecksumsStayValid) {
  WindowClamp clamp(262144);
  auto syn = segment(kClient, kServer, kSyn, 64240, 7);
  EXPECT_FALSE(clamp.apply(syn.data(), syn.size()));  // 64240 fits a SYN's cap of 65535
  auto syn_ack = segment(kServer, kClient, kSyn | kAck, 65160, 3);
  EXPECT_FALSE(clamp.apply(syn_ack.data(), syn_ack.size()));
  // The server (shift 3) advertises 60000 << 3 = 480000 bytes: lowered to 262144 >> 3.
  auto ack = segment(kServer, kClient, kAck, 60000);
  EXPECT_TRUE(clamp.apply(ack.data(), ack.size()));
  EXPECT_EQ(get16(ack, 48), 262144 >> 3);
  EXPECT_EQ(tcp_checksum(ack), 0) << "checksum no longer matches";
  // The client (shift 7) advertises 1000 << 7 = 128000: under the cap, left alone.
  auto small = segment(kClient, kServer, kAck, 1000);
  const auto before = small;
  EXPECT_FALSE(clamp.apply(small.data(), small.size()));
  EXPECT_EQ(small, before);
  auto big = segment(kClient, kServer, kAck, 5000);  // 640000 bytes
  EXPECT_TRUE(clamp.apply(big.data(), big.size()));
  EXPECT_EQ(get16(big, 48), 262144 >> 7);
  EXPECT_EQ(tcp_checksum(big), 0);
}

TEST(WindowClamp, WithoutScalingOnBothSidesWindowsAreBytes) {
  WindowClamp clamp(20000);
  auto syn = segment(kClient, kServer, kSyn, 64240, 7);
  EXPECT_TRUE(clamp.apply(syn.data(), syn.size()));  // a SYN's window is capped unscaled
  EXPECT_EQ(get16(syn, 48), 20000);
  EXPECT_EQ(tcp_checksum(syn), 0);
  auto syn_ack = segment(kServer, kClient, kSyn | kAck, 65160);  // no option: no scaling
  EXPECT_TRUE(clamp.apply(syn_ack.data(), syn_ack.size()));
  auto ack = segment(kClient, kServer, kAck, 30000);
  EXPECT_TRUE(clamp.apply(ack.data(), ack.size()));
  EXPECT_EQ(get16(ack, 48), 20000) << "the client's offer of scaling did not take effect";
}

TEST(WindowClamp, LeavesAloneWhatItCannotJudge) {
  WindowClamp clamp(1000);
  auto unknown = segment(kClient, kServer, kAck, 60000);  // handshake never seen
  EXPECT_FALSE(clamp.apply(unknown.data(), unknown.size()));
  auto udp = segment(kClient, kServer, kAck, 60000);
  udp[23] = 17;
  EXPECT_FALSE(clamp.apply(udp.data(), udp.size()));
  auto fragment = segment(kClient, kServer, kSyn, 60000);
  put16(fragment, 20, 0x0010);  // fragment offset 16 x 8 bytes
  EXPECT_FALSE(clamp.apply(fragment.data(), fragment.size()));
  auto runt = segment(kClient, kServer, kSyn, 60000);
  EXPECT_FALSE(clamp.apply(runt.data(), 40));
  WindowClamp off(0);
  auto syn = segment(kClient, kServer, kSyn, 60000);
  EXPECT_FALSE(off.apply(syn.data(), syn.size()));
}

TEST(WindowClamp, ForgetsAConnectionAtItsEnd) {
  WindowClamp clamp(10000);
  auto syn = segment(kClient, kServer, kSyn, 5000, 2);
  clamp.apply(syn.data(), syn.size());
  auto syn_ack = segment(kServer, kClient, kSyn | kAck, 5000, 2);
  clamp.apply(syn_ack.data(), syn_ack.size());
  EXPECT_EQ(clamp.connections(), 2u);
  auto fin = segment(kClient, kServer, kFin | kAck, 60000);
  EXPECT_TRUE(clamp.apply(fin.data(), fin.size()));
  auto fin_back = segment(kServer, kClient, kFin | kAck, 60000);
  EXPECT_TRUE(clamp.apply(fin_back.data(), fin_back.size()));
  EXPECT_EQ(clamp.connections(), 0u);
}

}  // namespace
}  // namespace multilane::emu
