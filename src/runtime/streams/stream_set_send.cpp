// runtime/streams/stream_set_send.cpp — StreamSet: the posted send and each stream's outbox: frames
// queued, written, and the send completed.
#include "runtime/streams/stream_set_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <utility>

#include "multilane/errors.hpp"
#include "runtime/tcp/frame_writer.hpp"

namespace multilane::runtime {

void StreamSet::Impl::start_send(std::span<const std::byte> message, std::uint64_t sequence) {
  if (send.active) throw UsageError(fmt::format("a send to {} is already posted", peer));
  send = Send{.active = true, .id = next_send_id, .sequence = sequence, .message = message};
  if (stall_watch) refresh_stalled();
  const int k = static_cast<int>(streams.size());
  if (is_striped(message.size(), k, options.stripe)) {
    send.feed = options.equal_shares
                    ? equal_shares(message.size(), k)
                    : ChunkFeed(message.size(), k, kSmallestPiece,
                                largest_piece(options.stripe.max_chunk, options.unsent_limit));
    send.keeps_until_acknowledged = options.resend_stalled;
    send.keeps_tail = send.keeps_until_acknowledged && long_path();
    send.striped = true;
    if (governor.adapts()) start_rate_measure();
    feed_streams();
  } else {
    Stream& s = stream_for_whole_message();
    queue_frame(s, {0, message.size()}, 0);
    write_next(s);
  }
  if (send.keeps_until_acknowledged) arm_probe();
}

// A split send that keeps its tail is done once the previous one's tail is settled (at most
// one message's tail is kept); one that does not, once the peer acknowledged all of it.
bool StreamSet::Impl::send_done() const {
  if (failure || !send.active) return true;
  if (!send.all_handed_out()) return false;
  if (!send.keeps_until_acknowledged) return true;
  if (tail.active) return false;
  if (send.keeps_tail) return true;
  return std::none_of(streams.begin(), streams.end(),
                      [this](const Stream& s) { return holds(s, send.id); });
}

void StreamSet::Impl::finish_send() {
  if (failure) throw_failure();
  if (!send.active) return;
  if (send.keeps_tail) keep_tail();
  if (send.striped && governor.adapts()) governor.message_done(send.stalled, message_path());
  ++next_send_id;
  ++counters.messages;
  counters.message_bytes += send.message.size();
  send.active = false;
}

std::string StreamSet::Impl::sent_text() const {
  return fmt::format("sent {} of {} bytes", std::min<std::uint64_t>(send.sent, send.message.size()),
                     send.message.size());
}

void StreamSet::Impl::queue_frame(Stream& s, const ByteRange& range, std::uint16_t flags) {
  s.out.push(
      {.header = encode_frame_header(FrameHeader{flags, options.job_id, send.sequence, send.id,
                                                 range.offset, range.length, send.message.size()}),
       .payload = send.message.subspan(range.offset, range.length),
       .range = range,
       .message = send.id});
  ++send.borrowing_frames;
}

void StreamSet::Impl::write_next(Stream& s) {
  if (failure) return;
  s.out.write_next(s.socket, [this, &s](const asio::error_code& ec, std::size_t n) {
    if (ec == asio::error::operation_aborted && s.out.interrupting() && !failure) {
      return interrupted(s, n);
    }
    if (ec) return write_failed(s, ec);
    frame_written(s, n);
  });
}

void StreamSet::Impl::frame_written(Stream& s, std::size_t bytes) {
  bool too_late = false;  // the cancel came when the frame had gone whole
  const Outbox::Frame frame = s.out.wrote_front(bytes, too_late);
  if (frame.borrows()) {
    if (send.keeps_until_acknowledged) s.out.record(frame.range, send.id);
    send.sent += frame.range.length;
    --send.borrowing_frames;
  } else if (is_tail_copy(frame) && tail.active && frame.message == tail.id) {
    s.out.record(frame.range, frame.message);
  }
  if (too_late) resend_share(s, {});
  write_next(s);
  feed_streams();
  if (send.all_handed_out() && send.keeps_until_acknowledged && !send.keeps_tail) {
    forget_all_acknowledged();
  }
}

void StreamSet::Impl::write_failed(Stream& s, const asio::error_code& ec) {
  if (failure || ec == asio::error::operation_aborted) return;
  if (is_peer_gone(ec)) {
    peer_gone = true;
    return fail({ErrorKind::peer_gone,
                 fmt::format("peer {} closed the connection while message {} was sent ({})", s.name,
                             send.id, sent_text())});
  }
  fail({kind_of(ec),
        fmt::format("sending message {} to {} failed: {}", send.id, s.name, ec.message())});
}

}  // namespace multilane::runtime
