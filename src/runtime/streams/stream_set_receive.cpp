// runtime/streams/stream_set_receive.cpp — StreamSet: the posted receive and what each stream's
// FrameReader does with a frame: its payload read straight into the posted buffer, late copies
// dropped, the peer's close.
#include "runtime/streams/stream_set_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "multilane/errors.hpp"

namespace multilane::runtime {

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
      early_bytes.release(frame.header.length);
    if (failure) return;
  }
  for (Stream& s : streams) {
    if (s.reader->parked() && s.reader->header().message_id == receive.id) {
      s.reader->resume();
    } else if (!s.closed) {
      s.reader->start();  // unless it is busy or parked
    }
    if (failure) return;
  }
  check_all_closed();
}

bool StreamSet::Impl::recv_done() const {
  return failure || !receive.active || receive.complete;
}

std::uint64_t StreamSet::Impl::finish_recv() {
  if (failure) throw_failure();
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

// Each stream gets a FrameReader; the set decides, frame by frame, where payloads go.
void StreamSet::Impl::start_readers() {
  const FrameCheck check{options.job_id, options.max_message};
  for (Stream& s : streams) {
    s.reader = std::make_unique<FrameReader>(s.socket, check, s.name, s, scratch);
  }
  for (Stream& s : streams) s.reader->start();
}

bool StreamSet::Impl::admit(const FrameHeader& h) {
  peer_resends = peer_resends || (h.flags & kFrameAcknowledgeSoon) != 0;
  return true;
}

// Frames of the posted receive go straight into its buffer; late copies are dropped; frames of
// later messages are read ahead or wait for their receive.
FramePlacement StreamSet::Impl::place(Stream& s, const FrameHeader& h) {
  s.into = Into::Nothing;
  if (closing || already_complete(h.message_id)) return FramePlacement::discard();
  if (!receive.active || h.message_id > receive.id) {
    if (may_read_ahead(h)) return read_ahead(s, h);
    return FramePlacement::park();  // the streams ran ahead: keep it for its receive
  }
  if (!accept_header(s.name, h)) return FramePlacement::stop();
  s.into = Into::Buffer;
  return FramePlacement::read(receive.buffer.subspan(h.offset, h.length));
}

// Bytes count as arrived at once, not when the whole frame is in, because the rest of a frame
// on a stalled stream may come over other streams (and the sender knows the peer has what its
// TCP acknowledged).
void StreamSet::Impl::landed(Stream& s, const FrameHeader& h, std::uint64_t offset,
                             std::size_t bytes) {
  if (s.into != Into::Buffer) return;
  if (!receive.active || receive.id != h.message_id) {
    return s.reader->stop_payload();  // not our buffer any more
  }
  receive.arrived.add(h.offset + offset, bytes);
  check_complete();  // which stops this reader too when the message is complete
}

void StreamSet::Impl::frame_done(Stream& s, const FrameHeader& h) {
  if (std::exchange(s.into, Into::Nothing) == Into::Ahead) {
    return read_ahead_done(EarlyFrame{h, std::exchange(s.ahead, {})});
  }
  check_complete();
}

// A copy of bytes that arrived on another stream first.
bool StreamSet::Impl::already_complete(std::uint64_t message_id) const {
  if (receive.active && message_id == receive.id) return receive.complete;
  return message_id < (receive.active ? receive.id : next_recv_id);
}

// Checks a frame of the posted receive against it (failing the set if it does not fit) and
// records what it says about the message.
bool StreamSet::Impl::accept_header(const std::string& from, const FrameHeader& h) {
  if (h.sequence != receive.sequence) {
    fail({ErrorKind::mismatch,
          fmt::format("message {} from {} belongs to collective call {}, expected {}", h.message_id,
                      from, h.sequence, receive.sequence)});
    return false;
  }
  if (auto problem = length_problem(h); !problem.empty()) {
    fail({ErrorKind::mismatch, std::move(problem)});
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
    if (t.into == Into::Buffer) t.reader->stop_payload();
    if (receive.sender_waits && t.socket.is_open()) {
      acknowledge_now(t.socket.native_handle());
    }
  }
}

// `between_frames`: the stream ended cleanly before a header, not inside a frame.
void StreamSet::Impl::read_failed(Stream& s, const asio::error_code& ec, bool between_frames) {
  if (failure || ec == asio::error::operation_aborted) return;
  if (!is_peer_gone(ec)) {
    return fail({kind_of(ec), fmt::format("receiving from {} failed: {}", s.name, ec.message())});
  }
  if (!between_frames) {
    peer_gone = true;
    return fail(
        {ErrorKind::peer_gone, fmt::format("peer {} closed the connection during message {} ({})",
                                           s.name, receive.id, received_text())});
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
  if (failure) return;
  peer_gone = true;
  ended_by_peer = receive.arrived.bytes() == 0 && !receive.any_frame;
  fail({ErrorKind::peer_gone,
        fmt::format("peer {} closed the connection before message {} was complete ({})", peer,
                    receive.id, received_text())});
}

}  // namespace multilane::runtime
