// runtime/streams/stream_set_send.cpp — StreamSet: the posted send, whole on one stream or split
// over the streams by the striped sender (striped_sender.hpp), and its completion.
#include "runtime/streams/stream_set_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "multilane/errors.hpp"

namespace multilane::runtime {

void StreamSet::Impl::start_send(std::span<const std::byte> bytes, std::uint64_t sequence) {
  if (send.active) throw UsageError(fmt::format("a send to {} is already posted", peer));
  auto message = std::make_shared<StripedMessage>();
  message->header = {.job_id = options.job_id,
                     .sequence = sequence,
                     .message_id = next_send_id,
                     .total = bytes.size()};
  message->bytes = bytes;
  send = Send{.active = true, .message = message};
  // Only the streams found stalled before are asked: a small message should not cost a system
  // call per stream.
  sender.look_again_at_stalled(link, Clock::now(), options.stall_patience);
  if (is_striped(bytes.size(), static_cast<int>(streams.size()), options.stripe)) {
    send_split(message);
  } else {
    send_whole(message);
  }
  if (send.keeps_until_acknowledged) arm_probe();
}

void StreamSet::Impl::send_whole(const std::shared_ptr<StripedMessage>& message) {
  Stream& s = stream_for_whole_message();
  message->streams = {&s};
  message->frames_left = 1;
  sender.add(message);
  FrameHeader header = message->header;
  header.length = message->size();
  s.out.push({.header = encode_frame_header(header),
              .payload = message->bytes,
              .range = {0, message->size()},
              .message = message});
  pump(s);
}

void StreamSet::Impl::send_split(const std::shared_ptr<StripedMessage>& message) {
  send.striped = true;
  send.keeps_until_acknowledged = options.resend_stalled;
  send.keeps_tail = send.keeps_until_acknowledged && long_path();
  message->header.flags =
      kFrameStriped | (send.keeps_until_acknowledged ? kFrameAcknowledgeSoon : 0);
  message->links = {&link};
  message->streams = link.streams;
  const int k = static_cast<int>(streams.size());
  ChunkFeed feed = options.equal_shares
                       ? equal_shares(message->size(), k)
                       : ChunkFeed(message->size(), k, kSmallestPiece,
                                   largest_piece(options.stripe.max_chunk, options.unsent_limit));
  // The rate the path delivers, for the governor, counts from the acknowledgements now.
  if (link.governor.adapts()) sender.sample_acknowledged(link);
  sender.start_split(message, std::move(feed), options.resend_stalled);
}

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
  return *usable[next_send_id % usable.size()];
}

// One piece per stream (all are idle at the start of a send, so each takes one).
ChunkFeed StreamSet::Impl::equal_shares(std::uint64_t size, int streams) {
  const std::uint64_t share =
      (size + static_cast<std::uint64_t>(streams) - 1) / static_cast<std::uint64_t>(streams);
  return ChunkFeed(size, streams, share, share);
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

// A split send that keeps its tail is done once the previous one's tail is settled (at most
// one message's tail is kept); one that does not, once the peer acknowledged all of it.
bool StreamSet::Impl::send_done() const {
  if (failure || !send.active) return true;
  if (!send.message->all_handed_out()) return false;
  if (!send.keeps_until_acknowledged) return true;
  if (tail) return false;
  return send.keeps_tail || sender.delivered(*send.message);
}

void StreamSet::Impl::finish_send() {
  if (failure) throw_failure();
  if (!send.active) return;
  const std::shared_ptr<StripedMessage> message = send.message;
  if (send.keeps_tail && sender.keep_tail(*message)) {
    tail = message;
    arm_probe();
  } else {
    sender.forget(message);
  }
  if (send.striped) sender.report_done(*message);
  ++next_send_id;
  ++counters.messages;
  counters.message_bytes += message->size();
  send = Send{};
}

std::string StreamSet::Impl::sent_text() const {
  const std::uint64_t size = send.message->size();
  return fmt::format("sent {} of {} bytes", std::min(send.message->handed_over, size), size);
}

// Writes the next frame of `s`, after taking a piece when it has none.
void StreamSet::Impl::pump(Stream& s) {
  if (failure || s.out.writing()) return;
  if (s.out.empty() && !sender.take_piece(s)) return;
  s.out.write_next(s.socket, [this, &s](const asio::error_code& ec, std::size_t n) {
    if (ec == asio::error::operation_aborted && s.out.interrupting() && !failure) {
      return sender.interrupted(s, n);
    }
    if (ec) return write_failed(s, ec);
    sender.written(s, n);
    pump_all();
    // A send that completes on acknowledgement asks for it now rather than at the next look.
    if (send.active && send.keeps_until_acknowledged && !send.keeps_tail &&
        send.message->all_handed_out()) {
      for (Stream& stream : streams) sender.forget_acknowledged(stream);
    }
  });
}

void StreamSet::Impl::pump_all() {
  for (Stream& s : streams) pump(s);
}

void StreamSet::Impl::write_failed(Stream& s, const asio::error_code& ec) {
  if (failure || ec == asio::error::operation_aborted) return;
  const auto& writing = send.active ? send.message : tail;
  const std::uint64_t id = writing ? writing->header.message_id : next_send_id;
  if (is_peer_gone(ec)) {
    peer_gone = true;
    return fail({ErrorKind::peer_gone,
                 fmt::format("peer {} closed the connection while message {} was sent ({})", s.name,
                             id, send.active ? sent_text() : "its kept tail")});
  }
  fail({kind_of(ec), fmt::format("sending message {} to {} failed: {}", id, s.name, ec.message())});
}

}  // namespace multilane::runtime
