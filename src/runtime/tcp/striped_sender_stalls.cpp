// runtime/tcp/striped_sender_stalls.cpp — StripedSender on watched links: the look at a link's
// streams, the end game, a stalled stream's doubtful share sent again, and the kept tail (see
// striped_sender.hpp). Each stream's interrupted writes and recorded frames are its outbox's
// (frame_outbox.hpp).
#include <algorithm>
#include <vector>

#include "runtime/tcp/striped_sender.hpp"

namespace multilane::runtime {

void StripedSender::look_at(StripeLink& link, Clock::time_point now, const StallPatience& patience,
                            const StallPatience& endgame_patience) {
  const StallPatience& wait = in_endgame(link) ? endgame_patience : patience;
  PathSample path;
  std::chrono::microseconds longest_round_trip{0};
  std::uint64_t acknowledged = 0;
  std::vector<StripeStream*> recovered, newly_stalled, stalled;
  for (StripeStream* stream : link.streams) {
    if (!stream->open()) continue;
    const StreamProgress progress = probe(*stream);
    forget_acknowledged(*stream, progress);
    const bool was_stalled = stream->stalled;
    stream->stalled = link.watch.stalled(stream->index, progress, now, wait);
    if (was_stalled && !stream->stalled) recovered.push_back(stream);
    if (stream->stalled && !was_stalled) newly_stalled.push_back(stream);
    if (stream->stalled) stalled.push_back(stream);
    path.include(progress);
    acknowledged += progress.acknowledged;
    longest_round_trip = std::max(longest_round_trip, progress.round_trip);
  }
  link.path = path;
  link.acknowledged = acknowledged;
  report_stalls(link, newly_stalled, patience.wait(longest_round_trip), now);
  for (StripeStream* stream : stalled) resend_stalled_share(*stream);
  for (StripeStream* stream : recovered) pump_(*stream);
}

void StripedSender::look_again_at_stalled(StripeLink& link, Clock::time_point now,
                                          const StallPatience& patience) {
  for (StripeStream* stream : link.streams) {
    if (stream->stalled) {
      stream->stalled = link.watch.stalled(stream->index, probe(*stream), now, patience);
    }
  }
}

void StripedSender::sample_acknowledged(StripeLink& link) {
  link.acknowledged = 0;
  for (StripeStream* stream : link.streams) link.acknowledged += probe(*stream).acknowledged;
}

// A stall counts against the split messages the stream may carry: its unacknowledged bytes may
// be theirs although every piece it took was written. The first stall during a message may
// take streams out of use (stream_governor.hpp), at most once per `hold`.
void StripedSender::report_stalls(StripeLink& link, const std::vector<StripeStream*>& newly_stalled,
                                  Clock::duration hold, Clock::time_point now) {
  if (!link.governor.adapts()) return;
  for (StripeStream* stream : newly_stalled) {
    for (const auto& message : messages_) {
      if (!message->split || message->stalled || message->tail) continue;
      const auto& streams = message->streams;
      if (std::find(streams.begin(), streams.end(), stream) == streams.end()) continue;
      message->stalled = true;
      PathSample sample = link.path;
      sample.delivered_rate = message->pace.acknowledged_rate(now, link.acknowledged);
      link.governor.stalled(now, hold, sample);
    }
  }
}

// Every piece of `message` is handed out and a stream of it that moves has nothing left to
// write: it only waits for the streams still carrying it. A kept tail always does: its caller
// moved on and the peer waits for its bytes.
bool StripedSender::in_endgame(const StripedMessage& message) const {
  if (!message.resends || message.finished || !message.feed.empty()) return false;
  if (message.tail) return true;
  return std::any_of(message.streams.begin(), message.streams.end(),
                     [](const StripeStream* s) { return s->idle() && !s->stalled; });
}

// (A kept tail is no end game here: a receiver that is slow to read it is no stall.)
bool StripedSender::in_endgame(const StripeLink& link) const {
  return std::any_of(messages_.begin(), messages_.end(), [&](const auto& message) {
    const auto& links = message->links;
    return !message->tail && std::find(links.begin(), links.end(), &link) != links.end() &&
           in_endgame(*message);
  });
}

void StripedSender::forget_acknowledged(StripeStream& stream) {
  if (!stream.out.recorded().empty()) forget_acknowledged(stream, probe(stream));
}

// Forgets the frames of `stream` that the peer acknowledged, and those of finished messages.
void StripedSender::forget_acknowledged(StripeStream& stream, const StreamProgress& progress) {
  stream.out.forget_acknowledged(
      progress.unacknowledged, [](const StripeOutbox::Written& w) { return w.message->finished; },
      [](const StripeOutbox::Written&) {});
}

// `stream` stalled: its share of every message in its end game goes out again. A frame of such
// a message that it is writing is interrupted first; interrupted() re-sends then.
void StripedSender::resend_stalled_share(StripeStream& stream) {
  if (stream.out.interrupting()) return;
  std::vector<std::shared_ptr<StripedMessage>> ending;
  for (const auto& message : messages_) {
    if (!in_endgame(*message)) continue;
    if (holds_unacknowledged(stream, *message) || stream.writes(*message)) {
      ending.push_back(message);
    }
  }
  for (const auto& message : ending) {
    if (stream.writes(*message)) {
      stream.out.interrupt();
    } else {
      resend_share(stream, message, {});
    }
  }
}

// The front frame's write stopped after `bytes` bytes. The stream keeps what is left of it (the
// peer's reader expects the whole frame) unless nothing went out, and its share goes again.
void StripedSender::interrupted(StripeStream& stream, std::size_t bytes) {
  auto [message, written, unwritten] = stream.out.interrupted(bytes);
  stream.out.record(written, message);
  message->handed_over += written.length;
  --message->frames_left;
  resend_share(stream, message, unwritten);
  pump_(stream);
}

// The last frame of `message` went to the kernel, but a stream that stalled before the end game
// may still owe bytes of it (it took no more pieces, and all it took fitted in the buffers):
// those go again before the message is done, since no look may come between the last piece
// handed out and the last frame written. True if any went.
bool StripedSender::resend_stalled_shares(const std::shared_ptr<StripedMessage>& message) {
  if (!message->resends) return false;
  for (StripeStream* stream : message->streams) {
    if (stream->stalled) resend_share(*stream, message, {});
  }
  return !message->feed.empty();
}

// Sends again, on other streams, what `stream` may not have delivered of `message`: its
// unacknowledged bytes and `unwritten`. They go back to the feed, ahead of any bytes never
// sent, and the message's streams that can take pieces take them now.
void StripedSender::resend_share(StripeStream& stream,
                                 const std::shared_ptr<StripedMessage>& message,
                                 const ByteRange& unwritten) {
  ByteRanges doubt = take_doubt(stream, *message);
  doubt.add(unwritten);
  // A kept tail re-sends what it kept; anything else reaches the peer on the stream that wrote it.
  if (message->tail) doubt = message->tail->kept_part(doubt);
  if (doubt.empty()) return;
  stalls_.fetch_add(1, std::memory_order_relaxed);
  resent_bytes_.fetch_add(doubt.bytes(), std::memory_order_relaxed);
  if (message->feed.empty()) feeding_.push_front(message);  // it left with its last piece
  message->feed.give_back(doubt.ranges());
  for (StripeStream* other : message->streams) pump_(*other);
}

// What `stream` wrote of `message` and the peer has not acknowledged; forgotten here (it goes
// out again).
ByteRanges StripedSender::take_doubt(StripeStream& stream, const StripedMessage& message) {
  if (!holds_unacknowledged(stream, message)) return {};
  return stream.out.take_doubt(
      probe(stream).unacknowledged,
      [&](const StripeOutbox::Written& w) { return w.message.get() == &message; },
      [](const ByteRange&) {});
}

bool StripedSender::keep_tail(StripedMessage& message) {
  if (!message.resends) return false;
  ByteRanges unacknowledged;
  for (StripeStream* stream : message.streams) {
    if (!holds_unacknowledged(*stream, message)) continue;
    forget_acknowledged(*stream);
    for (const StripeOutbox::Written& w : stream->out.recorded()) {
      if (w.message.get() == &message) unacknowledged.add(w.range);
    }
  }
  if (unacknowledged.empty()) return false;
  message.tail.emplace(message.bytes, unacknowledged);
  message.bytes = {};
  message.last_progress = Clock::now();
  return true;
}

bool StripedSender::delivered(const StripedMessage& message) const {
  return message.all_handed_out() &&
         std::none_of(message.streams.begin(), message.streams.end(),
                      [&](const StripeStream* s) { return holds_unacknowledged(*s, message); });
}

std::vector<std::shared_ptr<StripedMessage>> StripedSender::settled_tails() const {
  std::vector<std::shared_ptr<StripedMessage>> settled;
  for (const auto& message : messages_) {
    if (message->tail && delivered(*message)) settled.push_back(message);
  }
  return settled;
}

bool StripedSender::holds_unacknowledged(const StripeStream& stream,
                                         const StripedMessage& message) {
  return stream.out.holds(
      [&](const StripeOutbox::Written& w) { return w.message.get() == &message; });
}

}  // namespace multilane::runtime
