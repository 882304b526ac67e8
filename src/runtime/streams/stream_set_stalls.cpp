// runtime/streams/stream_set_stalls.cpp — StreamSet: stall recovery: the streams' acknowledgements,
// stalled streams (stall_watch.hpp), and their doubtful share sent again on other streams.
#include "runtime/streams/stream_set_impl.hpp"
#include "runtime/tcp/written_frame.hpp"

#include <algorithm>
#include <vector>

namespace multilane::runtime {

namespace {

// How often a posted striped send reads its streams' acknowledgements (when resend_stalled
// is on): it looks for stalled streams and completes when every byte is acknowledged.
constexpr auto kProbeInterval = std::chrono::milliseconds(1);

}  // namespace

StreamProgress StreamSet::Impl::probe(Stream& s) {
  if (!s.socket.is_open()) return {};
  const int fd = s.socket.native_handle();
  return options.progress_probe ? options.progress_probe(fd) : tcp_progress(fd);
}

void StreamSet::Impl::arm_probe() {
  if (probing) return;
  if (!probe_timer) probe_timer = std::make_unique<asio::steady_timer>(*io);
  if (!stall_watch) stall_watch.emplace(static_cast<int>(streams.size()));
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
  return !send_done() || tail.active;
}

// Forgets acknowledged frames (the send is done once none is left), re-sends the share of
// every stalled stream once every piece is out and another stream has nothing left to write
// (a stream whose share went out again carries none of the send any more, unless it had to
// be given some again for want of other streams), and hands pieces to streams that
// recovered.
// A stream that stalls holding bytes of the kept tail has them sent again at once (the peer
// waits for that message), ahead of the posted send's pieces; the receiver reads the next
// message ahead meanwhile, so the patience is that of the posted send.
void StreamSet::Impl::look_at_streams() {
  const auto now = Clock::now();
  const bool ending = endgame();
  std::vector<Stream*> stalled, stalled_on_tail;
  bool someone_idle = false;
  bool newly_stalled = false;
  PathSample path;
  std::chrono::microseconds smoothed_round_trip{0};  // the longest, queueing included
  std::uint64_t acknowledged = 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& s = streams[i];
    const StreamProgress progress = probe(s);
    forget_acknowledged(s, progress);
    const bool holds_tail = tail.active && holds(s, tail.id);
    const bool was_stalled = s.stalled;
    s.stalled = stall_watch->stalled(static_cast<int>(i), progress, now,
                                     ending ? options.endgame_patience : options.stall_patience);
    const bool stalled_with_send = s.stalled && carries_send(s);  // scans the written frames once
    if (s.stalled && holds_tail) stalled_on_tail.push_back(&s);
    if (stalled_with_send && !s.out.interrupting()) stalled.push_back(&s);
    newly_stalled = newly_stalled || (stalled_with_send && !was_stalled);
    someone_idle = someone_idle || (s.out.idle() && !s.stalled);
    acknowledged += progress.acknowledged;
    smoothed_round_trip = std::max(smoothed_round_trip, progress.round_trip);
    path.include(progress);
  }
  send.path = path;  // no rate yet: report_stall() and message_path() add theirs
  if (newly_stalled && governor.adapts() && send.striped && !send_done()) {
    report_stall(now, path, acknowledged, smoothed_round_trip);
  }
  for (Stream* s : stalled_on_tail) resend_tail_share(*s);
  settle_tail();
  if (send_done()) return feed_streams();
  // Only once every piece is out: before that an idle stream takes new bytes, and a stall
  // in mid-message usually ends (the kernel retransmits) before the message does.
  if (someone_idle && send.feed.empty()) {
    for (Stream* s : stalled) {
      if (s->out.writes_borrowed()) {
        s->out.interrupt();  // resend_share() runs when the write has stopped
      } else {
        resend_share(*s, {});
      }
    }
  }
  feed_streams();  // streams found stalled before may have recovered
}

// Looks again at the streams found stalled last time (the others are not asked: a send of
// a small message should not cost a system call per stream).
void StreamSet::Impl::refresh_stalled() {
  const auto now = Clock::now();
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& s = streams[i];
    if (s.stalled) {
      s.stalled = stall_watch->stalled(static_cast<int>(i), probe(s), now, options.stall_patience);
    }
  }
}

// Every piece is out and a stream has nothing to write: the message now only waits for the
// streams still carrying it.
bool StreamSet::Impl::endgame() const {
  return send.feed.empty() && std::any_of(streams.begin(), streams.end(), [](const Stream& s) {
           return s.out.idle() && !s.stalled;
         });
}

// `s` holds bytes of the posted send that may not have reached the peer.
bool StreamSet::Impl::carries_send(const Stream& s) const {
  return holds(s, send.id) || s.out.writes_borrowed();
}

// Forgets the frames of `s` that the peer acknowledged (they are at the peer, to be read
// without the network's help).
void StreamSet::Impl::forget_acknowledged(Stream& s, const StreamProgress& progress) {
  s.out.forget_acknowledged(
      progress.unacknowledged, [](const Written&) { return false; },
      [&](const Written& w) {
        if (tail.active && w.message == tail.id) tail.delivered.add(w.range);
      });
}

void StreamSet::Impl::forget_all_acknowledged() {
  for (Stream& s : streams) {
    if (!s.out.recorded().empty()) forget_acknowledged(s, probe(s));
  }
}

bool StreamSet::Impl::holds(const Stream& s, std::uint64_t message_id) {
  return s.out.holds([&](const Written& w) { return w.message == message_id; });
}

// The front frame's write stopped after `bytes` bytes: its rest is copied out of the message
// (the stream still owes it to the peer) and its share goes out again.
void StreamSet::Impl::interrupted(Stream& s, std::size_t bytes) {
  const auto [id, written, unwritten] = s.out.interrupted(bytes);
  s.out.record(written, id);
  send.sent += written.length;
  --send.borrowing_frames;
  resend_share(s, unwritten);
  write_next(s);
}

// Sends again, on other streams, what `s` may not have delivered of the posted send: its
// unacknowledged bytes and `unwritten` (the rest of its interrupted frame). They go back to
// the feed, ahead of the bytes never sent. A stream takes a piece only when its outbox is
// empty and writes it at once, so it holds no borrowed frame it has not started.
void StreamSet::Impl::resend_share(Stream& s, const ByteRange& unwritten) {
  ByteRanges doubt = take_doubt(s, send.id);
  doubt.add(unwritten);
  count_stall(doubt);
  send.feed.give_back(doubt.ranges());
  feed_streams();
}

// What `s` wrote of message `message_id` and the peer has not acknowledged; forgotten here
// (it is to go out again). What it has acknowledged of the kept tail counts as delivered.
ByteRanges StreamSet::Impl::take_doubt(Stream& s, std::uint64_t message_id) {
  const bool of_tail = tail.active && message_id == tail.id;
  return s.out.take_doubt(
      probe(s).unacknowledged, [&](const Written& w) { return w.message == message_id; },
      [&](const ByteRange& has) {
        if (of_tail) tail.delivered.add(has);
      });
}

void StreamSet::Impl::count_stall(const ByteRanges& doubt) {
  ++counters.stalls;
  counters.resent_bytes += doubt.bytes();
}

}  // namespace multilane::runtime
