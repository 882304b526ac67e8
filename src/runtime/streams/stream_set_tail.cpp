// runtime/streams/stream_set_tail.cpp — StreamSet: the kept tail: the unacknowledged end of the
// last split send, copied, until TCP acknowledged it, and sent again from the copy when its stream
// stalls.
#include "runtime/streams/stream_set_impl.hpp"

#include <algorithm>
#include <vector>

namespace multilane::runtime {

// Some stream's shortest round trip is at least options.tail_round_trip.
bool StreamSet::Impl::long_path() {
  return std::any_of(streams.begin(), streams.end(), [this](Stream& s) {
    return probe(s).least_round_trip >= options.tail_round_trip;
  });
}

// The posted send is over for its caller: what TCP has not acknowledged of it is copied
// and kept (see KeptTail), so the caller gets its message back about one round trip
// earlier and the streams go on with the next one meanwhile.
void StreamSet::Impl::keep_tail() {
  ByteRanges unacknowledged;
  for (Stream& s : streams) {
    if (s.out.recorded().empty()) continue;
    forget_acknowledged(s, probe(s));
    for (const Written& w : s.out.recorded()) unacknowledged.add(w.range);
  }
  if (unacknowledged.empty()) return;
  tail = KeptTail{};
  tail.active = true;
  tail.id = send.id;
  tail.sequence = send.sequence;
  tail.kept = KeptBytes(send.message, unacknowledged);
  tail.resend = ChunkFeed(0, static_cast<int>(streams.size()), kSmallestPiece,
                          largest_piece(options.stripe.max_chunk, options.unsent_limit));
  arm_probe();
}

// Drops the kept tail once the peer acknowledged every kept byte on some stream; copies
// still queued then go out needlessly (the peer drops them) and are no longer watched.
void StreamSet::Impl::settle_tail() {
  if (!tail.active || tail.delivered.bytes() < tail.kept.bytes()) return;
  for (Stream& s : streams) {
    s.out.forget([&](const Written& w) { return w.message == tail.id; });
  }
  tail = KeptTail{};
}

void StreamSet::Impl::queue_tail_copy(Stream& s, const ByteRange& range) {
  // Owned, not borrowed from the tail: settle_tail() may drop the tail while copies are queued.
  Outbox::Frame frame{
      .header = encode_frame_header(FrameHeader{
          kFrameStriped | kFrameAcknowledgeSoon | kFrameResent, options.job_id, tail.sequence,
          tail.id, range.offset, range.length, tail.kept.message_size()}),
      .range = range,
      .message = tail.id};
  const auto payload = tail.kept.of(range);
  frame.owned.reserve(frame.header.size() + payload.size());
  frame.owned.assign(frame.header.begin(), frame.header.end());
  frame.owned.insert(frame.owned.end(), payload.begin(), payload.end());
  s.out.push(std::move(frame));
}

// The same for the kept tail's bytes on `s`: they go out again from the copy, before any
// piece of the posted send.
void StreamSet::Impl::resend_tail_share(Stream& s) {
  const ByteRanges doubt = take_doubt(s, tail.id);
  count_stall(doubt);
  tail.resend.give_back(doubt.ranges());
  feed_streams();
}

}  // namespace multilane::runtime
