// emu/delay_line/window_clamp.hpp — the WAN's cap on each TCP connection's window.
//
// A platform's `tcp_window` on a WAN link caps every connection crossing it at window / RTT.
// Kernel buffers cannot set that cap exactly (Linux derives the window from the receive
// buffer and a measured overhead ratio, and re-derives its clamp as traffic flows), so the
// delay line enforces it on the wire: a segment advertising more than `window_bytes` gets
// its window field lowered to the cap, its checksum updated (RFC 1624). Window scaling is
// followed per direction of each connection from the SYN and SYN-ACK options (RFC 7323);
// segments of connections whose handshake it did not see are left alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace multilane::emu {

class WindowClamp {
 public:
  explicit WindowClamp(std::uint32_t window_bytes) : window_(window_bytes) {}

  // Looks at one Ethernet frame and lowers its TCP window in place when it is above the cap.
  // Returns true when the frame was changed. A cap of 0 changes nothing.
  bool apply(std::uint8_t* frame, std::size_t len);

  std::size_t connections() const { return shifts_.size(); }

 private:
  struct Flow {  // one direction: the sender's address and port, then the receiver's
    std::uint64_t from, to;
    bool operator==(const Flow&) const = default;
  };
  struct FlowHash {
    std::size_t operator()(const Flow& f) const {
      return std::hash<std::uint64_t>()(f.from * 0x9e3779b97f4a7c15ULL ^ f.to);
    }
  };
  static constexpr std::size_t kMaxConnections = 1 << 16;
  static constexpr std::uint8_t kNoScaling = 0xff;  // SYN seen without the option

  void note_handshake(const Flow& flow, bool ack, std::uint8_t shift);

  std::uint32_t window_;
  std::unordered_map<Flow, std::uint8_t, FlowHash> shifts_;  // window scale each sender uses
};

}  // namespace multilane::emu
