// runtime/streams/stream_set_read_ahead.cpp — StreamSet: frames of the next message, read ahead
// into memory while the posted receive is incomplete (copies of a stalled stream's bytes may come
// behind them).
#include "runtime/streams/stream_set_impl.hpp"

#include <algorithm>
#include <utility>

namespace multilane::runtime {

namespace {

// Frames of the next message are read ahead into memory up to the posted receive's size,
// and at least this much (see EarlyFrame).
constexpr std::uint64_t kLeastReadAhead = 4 << 20;

}  // namespace

bool StreamSet::Impl::may_read_ahead(const FrameHeader& h) const {
  if (!receive.active || receive.complete || h.message_id != receive.id + 1) return false;
  const std::uint64_t budget = std::max<std::uint64_t>(receive.buffer.size(), kLeastReadAhead);
  return early_bytes.fits(h.length, budget);
}

FramePlacement StreamSet::Impl::read_ahead(Stream& s, const FrameHeader& h) {
  s.ahead = std::vector<std::byte>(h.length);
  early_bytes.hold(h.length);
  s.into = Into::Ahead;
  return FramePlacement::read(s.ahead);  // read_ahead_done() once it is in
}

// Its receive may have been posted meanwhile.
void StreamSet::Impl::read_ahead_done(EarlyFrame frame) {
  if (receive.active && frame.header.message_id == receive.id) return take_early(frame);
  if (frame.header.message_id < next_recv_id || closing) {
    early_bytes.release(frame.header.length);
    return;
  }
  early.push_back(std::move(frame));
}

void StreamSet::Impl::take_early(const EarlyFrame& frame) {
  const FrameHeader& h = frame.header;
  early_bytes.release(h.length);
  if (!accept_header(peer, h) || receive.complete) return;
  std::copy(frame.payload.begin(), frame.payload.end(),
            receive.buffer.begin() + static_cast<std::ptrdiff_t>(h.offset));
  receive.arrived.add(h.offset, h.length);
  check_complete();
}

}  // namespace multilane::runtime
