// emu/delay_line/frame_filter.hpp — which frames a WAN delay line carries.
//
// A frame crosses toward site S when it is unicast to one of S's lane MACs, or a broadcast
// ARP request for one of S's addresses (see emu/addressing.hpp). Everything else — frames
// for other sites, other broadcasts and multicasts — stays home. With one delay line per
// pair of sites this keeps any mesh of sites free of forwarding loops without STP.
#pragma once

#include <cstddef>
#include <cstdint>

namespace multilane::emu {

bool frame_for_site(const std::uint8_t* frame, std::size_t len, int site);

}  // namespace multilane::emu
