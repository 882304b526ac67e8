#include "emu/delay_line/window_clamp.hpp"

#include <algorithm>

namespace multilane::emu {

namespace {

constexpr std::size_t kEthernetHeader = 14;
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
constexpr std::uint8_t kOptionEnd = 0, kOptionNop = 1, kOptionWindowScale = 3;
constexpr std::uint8_t kMaxShift = 14;

std::uint16_t read16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}
std::uint32_t read32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
void write16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

// RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m').
std::uint16_t updated_checksum(std::uint16_t checksum, std::uint16_t old_word,
                               std::uint16_t new_word) {
  std::uint32_t sum = static_cast<std::uint16_t>(~checksum) +
                      std::uint32_t{static_cast<std::uint16_t>(~old_word)} + new_word;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

// The window-scale option of a SYN, or kNoScaling-marker 0xff when absent.
std::uint8_t window_scale_option(const std::uint8_t* options, std::size_t len) {
  std::size_t i = 0;
  while (i < len) {
    const std::uint8_t kind = options[i];
    if (kind == kOptionEnd) break;
    if (kind == kOptionNop) {
      ++i;
      continue;
    }
    if (i + 1 >= len || options[i + 1] < 2 || i + options[i + 1] > len) break;
    if (kind == kOptionWindowScale && options[i + 1] == 3) {
      return std::min(options[i + 2], kMaxShift);
    }
    i += options[i + 1];
  }
  return 0xff;
}

}  // namespace

void WindowClamp::note_handshake(const Flow& flow, bool ack, std::uint8_t shift) {
  if (shifts_.size() >= kMaxConnections) shifts_.clear();  // forget the oldest at once
  shifts_[flow] = shift;
  const Flow reverse{flow.to, flow.from};
  if (ack) {  // SYN-ACK: scaling is on only if both ends offered it
    const auto it = shifts_.find(reverse);
    if (it != shifts_.end() && (it->second == kNoScaling || shift == kNoScaling)) {
      it->second = kNoScaling;
      shifts_[flow] = kNoScaling;
    }
  }
}

bool WindowClamp::apply(std::uint8_t* frame, std::size_t len) {
  if (window_ == 0 || len < kEthernetHeader + 20) return false;
  if (read16(frame + 12) != 0x0800) return false;  // IPv4 only
  const std::uint8_t* ip = frame + kEthernetHeader;
  const std::size_t ip_header = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
  if ((ip[0] >> 4) != 4 || ip_header < 20 || ip[9] != kTcp) return false;
  if ((read16(ip + 6) & 0x1fff) != 0) return false;  // a later fragment: no TCP header
  std::uint8_t* tcp = frame + kEthernetHeader + ip_header;
  if (kEthernetHeader + ip_header + 20 > len) return false;
  const std::size_t tcp_header = static_cast<std::size_t>(tcp[12] >> 4) * 4;
  if (tcp_header < 20 || kEthernetHeader + ip_header + tcp_header > len) return false;

  const Flow flow{std::uint64_t{read32(ip + 12)} << 16 | read16(tcp),
                  std::uint64_t{read32(ip + 16)} << 16 | read16(tcp + 2)};
  const std::uint8_t flags = tcp[13];
  const std::uint16_t field = read16(tcp + 14);
  std::uint32_t limit;  // the largest window field this segment may carry
  if (flags & kSyn) {
    note_handshake(flow, flags & kAck, window_scale_option(tcp + 20, tcp_header - 20));
    limit = std::min<std::uint32_t>(window_, 0xffff);  // a SYN's window is never scaled
  } else {
    const auto it = shifts_.find(flow);
    if (it == shifts_.end()) return false;  // handshake not seen: leave it alone
    const std::uint8_t shift = it->second == kNoScaling ? 0 : it->second;
    limit = std::max<std::uint32_t>(1, std::min<std::uint32_t>(window_ >> shift, 0xffff));
    if (flags & (kFin | kRst)) shifts_.erase(it);
  }
  if (field <= limit) return false;
  const auto clamped = static_cast<std::uint16_t>(limit);
  write16(tcp + 16, updated_checksum(read16(tcp + 16), field, clamped));
  write16(tcp + 14, clamped);
  return true;
}

}  // namespace multilane::emu
