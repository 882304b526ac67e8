// runtime/streams/stream_set_watch.cpp — StreamSet: the watch of its streams while a send with
// resend_stalled is posted or a tail is kept, and the kept tail (striped_sender.hpp says what a
// look does).
#include "runtime/streams/stream_set_impl.hpp"

#include <algorithm>

namespace multilane::runtime {

namespace {

// How often the streams' acknowledgements are read while the watch is on: a send that
// completes on acknowledgement completes within this of it.
constexpr auto kProbeInterval = std::chrono::milliseconds(1);

}  // namespace

void StreamSet::Impl::arm_probe() {
  if (probing) return;
  if (!probe_timer) probe_timer = std::make_unique<asio::steady_timer>(*io);
  probing = true;
  probe_timer->expires_after(kProbeInterval);
  probe_timer->async_wait([this](const asio::error_code& ec) {
    probing = false;
    if (ec || failure || !watching()) return;
    look_at_streams();
    if (watching()) arm_probe();
  });
}

// A striped send is posted or a tail is kept: the streams' acknowledgements matter.
bool StreamSet::Impl::watching() const {
  return !send_done() || tail;
}

void StreamSet::Impl::look_at_streams() {
  sender.look_at(link, Clock::now(), options.stall_patience, options.endgame_patience);
  settle_tail();
  pump_all();  // streams found stalled before may have recovered
}

// Some stream's shortest round trip is at least options.tail_round_trip.
bool StreamSet::Impl::long_path() {
  return std::any_of(streams.begin(), streams.end(), [this](Stream& s) {
    return sender.probe(s).least_round_trip >= options.tail_round_trip;
  });
}

// Drops the kept tail once the peer acknowledged every kept byte; copies still queued then go
// out needlessly (the peer drops them) and are no longer watched.
void StreamSet::Impl::settle_tail() {
  if (!tail || !sender.delivered(*tail)) return;
  sender.forget(tail);
  tail.reset();
}

}  // namespace multilane::runtime
