// wan/message_relay.hpp — forwarding messages between pairs of stream sets (Channels::relay).
//
// For every pair (a, b) messages arriving on a are sent on b and those arriving on b are sent
// on a, all pairs and both directions at once from the calling thread. Each direction has two
// buffers of `max_message` bytes (allocated when first needed), so the next message is
// received while the previous one is sent on. A message larger than max_message fails the
// relay with the receiver's error. When the peer of one set of a pair ends its side between
// messages, what was received from it is still delivered, then both sets of the pair are
// closed (the other peer sees the end). The relay returns once every pair was closed so; any
// other failure closes every set and is thrown (TransportError). A relay fails when nothing
// moved for the sets' timeout.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <span>
#include <utility>

#include "runtime/streams/stream_set.hpp"

namespace multilane::wan {

struct RelayTotals {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

using SetPair = std::pair<runtime::StreamSet*, runtime::StreamSet*>;

RelayTotals relay_messages(asio::io_context& io, std::span<const SetPair> pairs,
                           std::uint64_t max_message);

}  // namespace multilane::wan
