// runtime/streams/stream_set_receive.cpp — StreamSet: the posted receive and each stream's reader:
// frame headers, payloads read straight into the posted buffer, late copies dropped, the peer's
// close.
#include "runtime/streams/stream_set_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "multilane/errors.hpp"

namespace multilane::runtime {

namespace {

// Scratch space for dropping late copies.
constexpr std::size_t kDiscardBytes = 64 * 1024;

}  // namespace

void StreamSet::Impl::start_receive(std::span<std::byte> buffer, std::uint64_t sequence,
                                    ReceiveSize size) {
  if (receive.active) throw UsageError(fmt::format("a receive from {} is already posted", peer));
  receive = Receive{
      .active = true, .id = next_recv_id, .sequence = sequence, .buffer = buffer, .size = size};
  if (size == ReceiveSize::Exact) receive.total = buffer.size();
  for (const EarlyFrame& frame : std::exchange(early, {})) {
    if (frame.header.message_id == receive.id)
      take_early(frame);
    else
      early_bytes -= frame.header.length;
    if (!failure.empty()) return;
  }
  for (Stream& s : streams) {
    if (s.parked && s.parked->message_id == receive.id) {
      const FrameHeader h = *s.parked;
      s.parked.reset();
      take_frame(s, h);
    } else if (!s.parked && !s.reading && !s.closed) {
      read_header(s);
    }
    if (!failure.empty()) return;
  }
  check_all_closed();
}

bool StreamSet::Impl::recv_done() const {
  return !failure.empty() || !receive.active || receive.complete;
}

std::uint64_t StreamSet::Impl::finish_recv() {
  if (!failure.empty()) throw_failure();
  if (!receive.active) return 0;
  ++next_recv_id;
  receive.active = false;
  return receive.total.value_or(0);
}

std::string StreamSet::Impl::received_text() const {
  if (!receive.total) {
    return fmt::format("received {} bytes of a message of up to {}", receive.arrived.bytes(),
                       receive.buffer.size());
  }
  return fmt::format("received {} of {} bytes", receive.arrived.bytes(), *receive.total);
}

void StreamSet::Impl::read_header(Stream& s) {
  s.reading = true;
  asio::async_read(s.socket, asio::buffer(s.header_in),
                   [this, &s](const asio::error_code& ec, std::size_t n) {
                     s.reading = false;
                     if (ec) return read_failed(s, ec, n == 0);
                     on_header(s);
                   });
}

void StreamSet::Impl::on_header(Stream& s) {
  FrameDecode decoded =
      decode_frame_header(s.header_in, FrameCheck{options.job_id, options.max_message}, s.name);
  if (!decoded.header) return fail(decoded.error);
  const FrameHeader& h = *decoded.header;
  peer_resends = peer_resends || (h.flags & kFrameAcknowledgeSoon) != 0;
  if (closing || already_complete(h.message_id)) return discard(s, h.length);
  if (!receive.active || h.message_id > receive.id) {
    if (may_read_ahead(h)) return read_ahead(s, h);
    s.parked = h;  // the streams ran ahead: keep it for its receive
    return;
  }
  take_frame(s, h);
}

// A copy of bytes that arrived on another stream first.
bool StreamSet::Impl::already_complete(std::uint64_t message_id) const {
  if (receive.active && message_id == receive.id) return receive.complete;
  return message_id < (receive.active ? receive.id : next_recv_id);
}

void StreamSet::Impl::take_frame(Stream& s, const FrameHeader& h) {
  if (!accept_header(s.name, h)) return;
  if (h.length == 0) return frame_arrived(s);
  read_payload(s, h, 0);
}

// Checks a frame of the posted receive against it (failing the set if it does not fit) and
// records what it says about the message.
bool StreamSet::Impl::accept_header(const std::string& from, const FrameHeader& h) {
  if (h.sequence != receive.sequence) {
    fail(fmt::format("message {} from {} belongs to collective call {}, expected {}", h.message_id,
                     from, h.sequence, receive.sequence));
    return false;
  }
  if (auto problem = length_problem(h); !problem.empty()) {
    fail(std::move(problem));
    return false;
  }
  receive.total = h.total;
  receive.any_frame = true;
  receive.sender_waits = receive.sender_waits || (h.flags & kFrameAcknowledgeSoon) != 0;
  return true;
}

// What is wrong with the message length a frame announces, or "".
std::string StreamSet::Impl::length_problem(const FrameHeader& h) const {
  if (receive.size == ReceiveSize::Exact && h.total != receive.buffer.size()) {
    return fmt::format("message {} from {} has {} bytes, the receive buffer {}", h.message_id, peer,
                       h.total, receive.buffer.size());
  }
  if (h.total > receive.buffer.size()) {
    return fmt::format("message {} from {} has {} bytes, more than the receive limit of {}",
                       h.message_id, peer, h.total, receive.buffer.size());
  }
  if (receive.total && *receive.total != h.total) {
    return fmt::format("frames of message {} from {} disagree on its length ({} and {} bytes)",
                       h.message_id, peer, *receive.total, h.total);
  }
  return {};
}

// Reads the rest of a frame's payload (from byte `done` on) straight into the buffer, as
// it comes: bytes count as arrived at once, not when the whole frame is in, because the
// rest of a frame on a stalled stream may come over other streams (and the sender knows
// the peer has what its TCP acknowledged).
void StreamSet::Impl::read_payload(Stream& s, const FrameHeader& h, std::uint64_t done) {
  s.reading = true;
  s.into_buffer = true;
  s.socket.async_read_some(
      asio::buffer(receive.buffer.data() + h.offset + done, h.length - done),
      asio::bind_cancellation_slot(
          s.stop_read->slot(), [this, &s, h, done](const asio::error_code& ec, std::size_t n) {
            s.reading = false;
            s.into_buffer = false;
            const bool current = receive.active && receive.id == h.message_id;
            if (current) receive.arrived.add(h.offset + done, n);
            if (ec == asio::error::operation_aborted && failure.empty() && s.socket.is_open()) {
              return discard(s, h.length - done - n);  // the message completed elsewhere
            }
            if (ec) return read_failed(s, ec, false);
            if (done + n < h.length) {
              if (current) check_complete();
              if (current && !receive.complete) return read_payload(s, h, done + n);
              return discard(s, h.length - done - n);  // not our buffer any more
            }
            frame_arrived(s);
          }));
}

// Reads and drops `bytes` bytes, then goes on with the next header.
void StreamSet::Impl::discard(Stream& s, std::uint64_t bytes) {
  if (bytes == 0) return read_header(s);
  if (scratch.empty()) scratch.resize(kDiscardBytes);
  const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kDiscardBytes));
  s.reading = true;
  asio::async_read(s.socket, asio::buffer(scratch.data(), piece),
                   [this, &s, bytes](const asio::error_code& ec, std::size_t n) {
                     s.reading = false;
                     if (ec) return read_failed(s, ec, false);
                     discard(s, bytes - n);
                   });
}

void StreamSet::Impl::frame_arrived(Stream& s) {
  check_complete();
  read_header(s);
}

void StreamSet::Impl::check_complete() {
  if (!receive.complete && receive.any_frame && receive.total &&
      receive.arrived.bytes() >= *receive.total) {
    complete_receive();
  }
}

// Every byte is in: reads still writing into the buffer (slower copies) are stopped, so
// nothing touches the buffer once the caller has it back; they drop the rest of their frame.
// A sender that re-sends waits for the acknowledgement of its last bytes, which the kernel
// may delay by 40 ms or more: they go out now.
void StreamSet::Impl::complete_receive() {
  receive.complete = true;
  for (Stream& t : streams) {
    if (t.into_buffer) t.stop_read->emit(asio::cancellation_type::terminal);
    if (receive.sender_waits && t.socket.is_open()) {
      acknowledge_now(t.socket.native_handle());
    }
  }
}

// `between_frames`: the stream ended cleanly before a header, not inside a frame.
void StreamSet::Impl::read_failed(Stream& s, const asio::error_code& ec, bool between_frames) {
  if (!failure.empty() || ec == asio::error::operation_aborted) return;
  if (!is_peer_gone(ec)) {
    return fail(fmt::format("receiving from {} failed: {}", s.name, ec.message()));
  }
  if (!between_frames) {
    peer_gone = true;
    return fail(fmt::format("peer {} closed the connection during message {} ({})", s.name,
                            receive.id, received_text()));
  }
  s.closed = true;
  check_all_closed();
}

// A peer may close streams it is done with; only when every stream is closed can a
// posted receive no longer complete.
void StreamSet::Impl::check_all_closed() {
  if (!receive.active || receive.complete) return;
  for (const Stream& s : streams) {
    if (!s.closed) return;
  }
  if (!failure.empty()) return;
  peer_gone = true;
  ended_by_peer = receive.arrived.bytes() == 0 && !receive.any_frame;
  fail(fmt::format("peer {} closed the connection before message {} was complete ({})", peer,
                   receive.id, received_text()));
}

}  // namespace multilane::runtime
