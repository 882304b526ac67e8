// runtime/streams/stream_set_feed.cpp — StreamSet: which stream carries what: a whole message in
// rotation, a split one's pieces handed to the streams in use (chunk_feed.hpp,
// stream_governor.hpp).
#include "runtime/streams/stream_set_impl.hpp"

#include <algorithm>
#include <vector>

namespace multilane::runtime {

// A message sent whole rotates over the streams that have nothing to write and are not
// stalled (over all streams when none is such).
StreamSet::Impl::Stream& StreamSet::Impl::stream_for_whole_message() {
  std::vector<Stream*> usable;
  for (Stream& s : streams) {
    if (s.out.idle() && !s.stalled) usable.push_back(&s);
  }
  if (usable.empty()) {
    for (Stream& s : streams) usable.push_back(&s);
  }
  return *usable[send.id % usable.size()];
}

// One piece per stream (all are idle at the start of a send, so each takes one).
ChunkFeed StreamSet::Impl::equal_shares(std::uint64_t size, int streams) {
  const std::uint64_t share =
      (size + static_cast<std::uint64_t>(streams) - 1) / static_cast<std::uint64_t>(streams);
  return ChunkFeed(size, streams, share, share);
}

// Hands the next piece of the posted send to every stream in use that has nothing to write
// and is not stalled: the first governor.in_use() streams that are not stalled. Stalled
// streams get pieces only when no other stream is there to take them.
void StreamSet::Impl::feed_streams() {
  if (failure || (!send.active && tail.resend.empty())) return;
  bool others_will_take = false;
  int in_use = governor.in_use();
  for (Stream& s : streams) {
    if (s.stalled) continue;
    if (in_use-- == 0) break;
    if (s.out.idle()) feed(s);
    others_will_take = others_will_take || !s.out.idle();
  }
  if (others_will_take) return;
  for (Stream& s : streams) {
    if (s.out.idle()) feed(s);
  }
}

// A copy of the kept tail's bytes first (the peer waits for them), else the next piece.
void StreamSet::Impl::feed(Stream& s) {
  if (const auto copy = tail.resend.next()) {
    queue_tail_copy(s, copy->range);
    return write_next(s);
  }
  if (!send.active) return;
  const auto piece = send.feed.next();
  if (!piece) return;
  const std::uint16_t flags = kFrameStriped |
                              (send.keeps_until_acknowledged ? kFrameAcknowledgeSoon : 0) |
                              (piece->resent ? kFrameResent : 0);
  queue_frame(s, piece->range, flags);
  write_next(s);
}

// The streams in use adapt to stalls (stream_governor.hpp). Not on a paced path: its streams
// are already kept below the path's rate, each at its share of it, so fewer of them would
// only be slower. Not through a relay: the streams' round trip and stalls are those of the
// hop to the relay (a full relay buffer looks like a stall), not of the path beyond it, which
// may need every stream.
bool StreamSet::Impl::governed() const {
  return options.adapt_streams && options.resend_stalled && !options.equal_shares &&
         options.pacing_rate == 0 && !options.relayed;
}

void StreamSet::Impl::start_rate_measure() {
  send.pace.started = Clock::now();
  for (Stream& s : streams) send.pace.acknowledged_at_start += probe(s).acknowledged;
}

// A stream carrying the posted striped send stalled: the governor may take streams out of
// use. `acknowledged`: the streams' acknowledged bytes now, added up; `round_trip`: the
// longest smoothed round trip of the streams.
void StreamSet::Impl::report_stall(Clock::time_point now, PathSample path,
                                   std::uint64_t acknowledged,
                                   std::chrono::microseconds round_trip) {
  send.stalled = true;
  path.delivered_rate = send.pace.acknowledged_rate(now, acknowledged);
  // A decrease shows once the streams let go have finished their pieces and recovered.
  governor.stalled(now, options.stall_patience.wait(round_trip), path);
}

// The path as the posted send found it: its bytes over its time so far.
PathSample StreamSet::Impl::message_path() const {
  PathSample path = send.path;
  path.delivered_rate = send.pace.message_rate(Clock::now(), send.message.size());
  return path;
}

}  // namespace multilane::runtime
