// emu/delay_line/tap.hpp — a delay line's ports: persistent TAP devices on the sites' bridges.
#pragma once

#include <string>

namespace multilane::emu {

// Attaches to the persistent TAP device `ifname` (created by `ip tuntap add ... mode tap`) in
// network namespace `netns`; returns a non-blocking, close-on-exec descriptor that reads and
// writes whole Ethernet frames. Throws EmuError naming the device.
int attach_tap(const std::string& netns, const std::string& ifname);

}  // namespace multilane::emu
