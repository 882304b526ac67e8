// runtime/transport/send_side_stalls.cpp — SendSide on WAN links: the stall watch, the streams
// in use, and a stalled stream's doubtful share of a split send sent again on the other streams
// (see send_side.hpp). Each stream's interrupted writes and recorded frames are its outbox's
// (frame_outbox.hpp).
//
// Only in a split send's end game (every piece handed out, and a stream that moves has nothing
// left to write): before that, a stalled stream just takes no more pieces, and the kernel
// usually retransmits its bytes before the message ends. Its doubtful share is what it wrote
// and the peer has not acknowledged, and the unwritten rest of the frame it is writing: that
// write is interrupted (write_frame's cancellation reports the exact bytes written), the
// stream keeps a copy of the rest (the peer expects the whole frame), so the send no longer
// borrows the caller's message through it, and the share goes back to the send's piece feed.
#include <algorithm>
#include <vector>

#include "runtime/transport/send_side.hpp"

namespace multilane::runtime {

namespace {

// How often the watch samples the WAN links' streams while split sends are in flight: often
// enough to see a stall well within the patience (60 ms at least), and rarely enough that
// eight ranks sharing two cores do not spend them on TCP_INFO.
constexpr auto kWatchInterval = std::chrono::milliseconds(10);

}  // namespace

EngineSendCounters SendSide::counters() const {
  return {.stalls = stalls_.load(std::memory_order_relaxed),
          .resent_bytes = resent_bytes_.load(std::memory_order_relaxed),
          .moved_to_peer = switched_to_lower_ranks_.load(std::memory_order_relaxed)};
}

StreamProgress SendSide::probe(Stream& stream) const {
  const int fd = stream.socket().native_handle();
  return context_.config.progress_probe ? context_.config.progress_probe(fd) : tcp_progress(fd);
}

// The watch: every 10 ms while a split send is in flight over a WAN link, each of the link's
// streams is sampled (TCP_INFO); a stream that stalls takes no more pieces, and its first stall
// during a send may take streams out of use (stream_governor.hpp).
void SendSide::arm_watch() {
  if (watching_) return;
  watching_ = true;
  watch_timer_.expires_after(kWatchInterval);
  watch_timer_.async_wait([this](const asio::error_code& error) {
    watching_ = false;
    if (error) return;
    const auto now = Clock::now();
    bool busy = false;
    for_each_link([&](Link& l) {
      if (!l.governor.adapts()) return;
      if (l.split_sends > 0) {
        look_at(l, now);
        busy = true;
      } else {
        for (auto& stream : l.streams) stream->stalled = false;  // the next send looks afresh
      }
    });
    settle_tails();
    if (busy) arm_watch();
  });
}

void SendSide::look_at(Link& link, Clock::time_point now) {
  const EngineConfig& config = context_.config;
  const StallPatience patience =
      link_in_endgame(link) ? config.endgame_patience : config.stall_patience;
  PathSample path;
  std::chrono::microseconds smoothed_round_trip{0};
  std::uint64_t acknowledged = 0;
  std::vector<Stream*> recovered, newly_stalled, stalled;
  for (auto& stream : link.streams) {
    if (!stream->connection || stream->closed) continue;
    const StreamProgress progress = probe(*stream);
    forget_acknowledged(*stream, progress);
    const bool was_stalled = stream->stalled;
    stream->stalled = link.watch.stalled(stream->index, progress, now, patience);
    if (was_stalled && !stream->stalled) recovered.push_back(stream.get());
    if (stream->stalled && !was_stalled) newly_stalled.push_back(stream.get());
    if (stream->stalled) stalled.push_back(stream.get());
    path.include(progress);
    acknowledged += progress.acknowledged;
    smoothed_round_trip = std::max(smoothed_round_trip, progress.round_trip);
  }
  link.path = path;
  link.acknowledged = acknowledged;
  report_stalls(link, newly_stalled, path, acknowledged, smoothed_round_trip, now);
  if (context_.config.resend_stalled) {
    for (Stream* stream : stalled) resend_stalled_share(*stream);
  }
  for (Stream* stream : recovered) pump(*stream);
}

// A stall counts against the split sends the stream may carry: its unacknowledged bytes may be
// theirs although every piece it took was written.
void SendSide::report_stalls(Link& link, const std::vector<Stream*>& newly_stalled,
                             const PathSample& path, std::uint64_t acknowledged,
                             std::chrono::microseconds round_trip, Clock::time_point now) {
  for (Stream* stream : newly_stalled) {
    for (const auto& op : ops_) {
      if (!op->split || op->stalled) continue;
      if (std::find(op->streams.begin(), op->streams.end(), stream) == op->streams.end()) continue;
      op->stalled = true;
      PathSample sample = path;
      sample.delivered_rate = op->pace.acknowledged_rate(now, acknowledged);
      link.governor.stalled(now, context_.config.stall_patience.wait(round_trip), sample);
    }
  }
}

// Every piece of `op` is handed out and a stream of it that moves has nothing left to write:
// the message now only waits for the streams still carrying it.
bool SendSide::in_endgame(const Op& op) const {
  return op.resends && !op.finished && op.feed.empty() &&
         std::any_of(op.streams.begin(), op.streams.end(),
                     [](const Stream* s) { return s->idle() && !s->stalled; });
}

// (A kept tail is no end game here: a receiver that is slow to read it is no stall.)
bool SendSide::link_in_endgame(const Link& link) const {
  return std::any_of(ops_.begin(), ops_.end(), [&](const std::shared_ptr<Op>& op) {
    return !op->tail && std::find(op->links.begin(), op->links.end(), &link) != op->links.end() &&
           in_endgame(*op);
  });
}

// Forgets the frames of `stream` that the peer acknowledged, and those of finished sends.
void SendSide::forget_acknowledged(Stream& stream, const StreamProgress& progress) {
  stream.out.forget_acknowledged(
      progress.unacknowledged, [](const Outbox::Written& w) { return w.message->finished; },
      [](const Outbox::Written&) {});
}

// `stream` stalled: its share of every split send in its end game goes out again. A frame of
// such a send that it is writing is interrupted first; interrupted() re-sends then.
void SendSide::resend_stalled_share(Stream& stream) {
  if (stream.out.interrupting()) return;
  std::vector<std::shared_ptr<Op>> ending;
  for (const auto& op : ops_) {
    if (!in_endgame(*op)) continue;
    if (holds_unacknowledged(stream, *op) || stream.writes(*op)) ending.push_back(op);
  }
  for (const auto& op : ending) {
    if (stream.writes(*op)) {
      stream.out.interrupt();
    } else {
      resend_share(stream, op, {});
    }
  }
}

// The front frame's write stopped after `bytes` bytes. The stream keeps what is left of it (the
// peer's reader expects the whole frame) unless nothing went out, and its share goes again.
void SendSide::interrupted(Stream& stream, std::size_t bytes) {
  auto [op, written, unwritten] = stream.out.interrupted(bytes);
  stream.out.record(written, op);
  op->handed_over += written.length;
  --op->frames_left;
  resend_share(stream, op, unwritten);
  pump(stream);
}

// The last frame of `op` went to the kernel, but a stream that stalled before its end game may
// still owe bytes of it (it took no more pieces, and all it took fitted in the buffers): those
// go again before the send is done, since the watch may not look between the last piece
// handed out and the last frame written. True if any went.
bool SendSide::resend_stalled_shares(const std::shared_ptr<Op>& op) {
  if (!op->resends) return false;
  for (Stream* stream : op->streams) {
    if (stream->stalled) resend_share(*stream, op, {});
  }
  return !op->feed.empty();
}

// Sends again, on other streams, what `stream` may not have delivered of `op`: its
// unacknowledged bytes and `unwritten`. They go back to the feed, ahead of any bytes never sent,
// and the send's streams that can take pieces take them now.
void SendSide::resend_share(Stream& stream, const std::shared_ptr<Op>& op,
                            const ByteRange& unwritten) {
  ByteRanges doubt = take_doubt(stream, *op);
  doubt.add(unwritten);
  // A kept tail re-sends what it kept; anything else reaches the peer on the stream that wrote it.
  if (op->tail) doubt = op->tail->kept_part(doubt);
  if (doubt.empty()) return;
  stalls_.fetch_add(1, std::memory_order_relaxed);
  resent_bytes_.fetch_add(doubt.bytes(), std::memory_order_relaxed);
  if (op->feed.empty()) feeding_.push_front(op);  // it left the feeding list with its last piece
  op->feed.give_back(doubt.ranges());
  for (Stream* other : op->streams) pump(*other);
}

// What `stream` wrote of `op` and the peer has not acknowledged; forgotten here (it goes out
// again).
ByteRanges SendSide::take_doubt(Stream& stream, const Op& op) {
  if (!holds_unacknowledged(stream, op)) return {};
  return stream.out.take_doubt(
      probe(stream).unacknowledged,
      [&](const Outbox::Written& w) { return w.message.get() == &op; }, [](const ByteRange&) {});
}

// The caller of `op` gets its message back now: what TCP has not acknowledged of it (the frames
// the watch has not seen acknowledged, whole) is copied and kept, so that a stream that stalls
// before the peer has those bytes has its share sent again from the copy. False when nothing is
// left to keep.
bool SendSide::keep_tail(Op& op) {
  if (!op.resends) return false;
  ByteRanges unacknowledged;
  for (Stream* stream : op.streams) {
    if (!holds_unacknowledged(*stream, op)) continue;
    forget_acknowledged(*stream, probe(*stream));
    for (const Outbox::Written& w : stream->out.recorded()) {
      if (w.message.get() == &op) unacknowledged.add(w.range);
    }
  }
  if (unacknowledged.empty()) return false;
  op.tail.emplace(op.request.bytes, unacknowledged);
  op.request.bytes = {};
  op.last_progress = Clock::now();
  context_.own_work_began();  // the watch must go on looking after the caller moved on
  return true;
}

// Drops the kept tails that TCP acknowledged: no stream holds a frame of theirs the peer has not
// acknowledged (the watch forgets those it sees acknowledged), and no copy is left to send.
void SendSide::settle_tails() {
  std::vector<std::shared_ptr<Op>> settled;
  for (const auto& op : ops_) {
    if (!op->tail || op->frames_left > 0 || !op->feed.empty()) continue;
    const bool waiting = std::any_of(op->streams.begin(), op->streams.end(), [&](const Stream* s) {
      return holds_unacknowledged(*s, *op);
    });
    if (!waiting) settled.push_back(op);
  }
  for (const auto& op : settled) finish(op, kSucceeded);
}

bool SendSide::holds_unacknowledged(const Stream& stream, const Op& op) {
  return stream.out.holds([&](const Outbox::Written& w) { return w.message.get() == &op; });
}

}  // namespace multilane::runtime
