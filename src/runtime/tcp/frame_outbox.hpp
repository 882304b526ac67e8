// runtime/tcp/frame_outbox.hpp — one stream's outgoing frames: queued, written to the socket one
// at a time in order, a write interrupted so that its share can go on other streams, and the
// written frames the peer may not have yet. The one frame queue of every sender: the engine's
// SendSide, StreamSet (channels, relay, cp, MPWide) and the routers' ChunkLink.
//
//   push(frame) ──► [front being written] [queued] [queued] ──► write_frame() ──► kernel
//                         │ interrupt(): the write stops; its unwritten rest stays at the front,
//                         │              owned, since the peer's reader expects the whole frame
//                         ▼
//                   wrote_front(): the frame left whole; record() it if its bytes may have to
//                   go again, until forget_acknowledged() or take_doubt() drops it
//
// A frame borrows its payload from the message it belongs to (`payload`), or owns its bytes
// (`owned`: the header and payload in one vector), as the rest of an interrupted frame or a
// sender's copy of bytes it kept. `Message` names the frame's owner to the sender (its send
// operation, message id or completion); the outbox only hands it back. `Header` is the frame's
// encoded header (a frame header, or a route and a frame header).
//
// A write's handler runs on the socket's executor; the outbox must outlive it (its owner closes
// the socket before destroying the outbox, so the write ends first). Not thread-safe.
#pragma once

#include <algorithm>
#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"
#include "runtime/tcp/frame_writer.hpp"
#include "runtime/tcp/wire.hpp"
#include "runtime/tcp/written_frame.hpp"

namespace multilane::runtime {

template <typename Message, typename Header = FrameBytes>
class FrameOutbox {
 public:
  struct Frame {
    Header header{};
    std::span<const std::byte> payload{};  // borrowed from the message, unless `owned`
    ByteRange range{};                     // the payload's place in the message
    Message message{};
    std::vector<std::byte> owned = {};  // or: what is left of the header, then the payload
    // Bytes of it the sender wrote at once (write_frame_now) before queueing the rest.
    std::size_t written = 0;
    // The unwritten rest of an interrupted frame: the peer expects it, no sender waits for it.
    bool rest = false;
    bool borrows() const { return owned.empty(); }
  };
  using Written = WrittenFrame<Message>;

  // What an interrupted write left: `message`'s bytes the kernel took (`written`) and those it
  // did not (`unwritten`), both parts of the frame's range.
  struct Interrupted {
    Message message;
    ByteRange written;
    ByteRange unwritten;
  };

  void push(Frame frame) { queue_.push_back(std::move(frame)); }
  bool empty() const { return queue_.empty(); }
  bool writing() const { return writing_; }
  bool interrupting() const { return interrupting_; }
  bool idle() const { return queue_.empty() && !writing_; }
  const Frame& front() const { return queue_.front(); }
  const std::deque<Frame>& frames() const { return queue_; }
  // Writing a frame that borrows its payload from a message.
  bool writes_borrowed() const { return writing_ && queue_.front().borrows(); }
  // Every queued frame, for a sender that closes the stream: the outbox is empty after.
  std::deque<Frame> take_all() {
    std::deque<Frame> frames = std::move(queue_);
    queue_.clear();
    return frames;
  }

  // Starts writing the front frame unless a write is under way or nothing is queued.
  // `handler(error, bytes)` gets the bytes of the frame that went to the kernel, those the
  // sender wrote at once included; an interrupted write ends with operation_aborted.
  template <typename Handler>
  void write_next(asio::ip::tcp::socket& socket, Handler handler) {
    if (writing_ || queue_.empty()) return;
    const Frame& frame = queue_.front();
    const std::size_t header_written = std::min(frame.written, frame.header.size());
    std::span<const std::byte> head =
        std::span<const std::byte>(frame.header).subspan(header_written);
    std::span<const std::byte> body = frame.payload.subspan(frame.written - header_written);
    if (!frame.borrows()) {
      head = frame.owned;
      body = {};
    }
    writing_ = true;
    write_frame(
        socket, head, body,
        asio::bind_cancellation_slot(stop_write_->slot(),
                                     [this, before = frame.written, handler = std::move(handler)](
                                         const asio::error_code& error, std::size_t bytes) mutable {
                                       writing_ = false;
                                       handler(error, before + bytes);
                                     }));
  }

  // Stops the write under way (its handler then gets operation_aborted, or success when the
  // frame went whole first).
  void interrupt() {
    if (!writing_ || interrupting_) return;
    interrupting_ = true;
    stop_write_->emit(asio::cancellation_type::terminal);
  }

  // The front frame went to the kernel whole (`bytes`: all of it): it leaves the queue and is
  // returned. `too_late` says whether an interrupt() came after it had gone.
  Frame wrote_front(std::size_t bytes, bool& too_late) {
    handed_ += bytes;
    too_late = std::exchange(interrupting_, false);
    Frame frame = std::move(queue_.front());
    queue_.pop_front();
    return frame;
  }

  // The front frame's write stopped after `bytes` bytes: what is left of it stays at the front,
  // owned (or the frame leaves the queue when nothing went), and the parts of its payload are
  // returned with its message.
  Interrupted interrupted(std::size_t bytes) {
    interrupting_ = false;
    handed_ += bytes;
    Frame& frame = queue_.front();
    const std::size_t payload_written = bytes - std::min(bytes, frame.header.size());
    Interrupted result{
        .message = std::move(frame.message),
        .written = {frame.range.offset, payload_written},
        .unwritten = {frame.range.offset + payload_written, frame.range.length - payload_written}};
    if (bytes == 0) {
      queue_.pop_front();
    } else {
      frame.owned = frame_rest(frame.header, frame.payload, bytes);
      frame.payload = {};
      frame.message = Message{};
      frame.rest = true;
    }
    return result;
  }

  // A whole frame the sender wrote to the socket itself (write_frame_now), with nothing queued.
  void wrote_directly(std::size_t bytes) { handed_ += bytes; }

  // The bytes ever handed to the kernel on this stream.
  std::uint64_t handed() const { return handed_; }

  // Remembers that `range` of `message`, the payload of the frame that just went, may have to
  // go again until the peer acknowledges it.
  void record(const ByteRange& range, Message message) {
    if (range.length == 0) return;
    written_.push_back({handed_, range, std::move(message)});
  }
  const std::vector<Written>& recorded() const { return written_; }
  template <typename Mine>
  bool holds(Mine mine) const {
    return std::any_of(written_.begin(), written_.end(), mine);
  }
  template <typename Mine>
  void forget(Mine mine) {
    std::erase_if(written_, mine);
  }
  // Forgets the recorded frames the peer acknowledged (`unacknowledged`: the kernel's count of
  // bytes it has not), calling `has(frame)` for each, and those `stale` selects.
  template <typename Stale, typename Has>
  void forget_acknowledged(std::uint64_t unacknowledged, Stale stale, Has has) {
    runtime::forget_acknowledged(written_, delivered_end(handed_, unacknowledged), stale, has);
  }
  // Takes the recorded frames `mine` selects and returns what of them the peer may not have;
  // `has(range)` hears of the part of each it has.
  template <typename Mine, typename Has>
  ByteRanges take_doubt(std::uint64_t unacknowledged, Mine mine, Has has) {
    return runtime::take_doubt(written_, delivered_end(handed_, unacknowledged), mine, has);
  }

 private:
  std::deque<Frame> queue_;
  bool writing_ = false;
  bool interrupting_ = false;
  std::uint64_t handed_ = 0;
  std::vector<Written> written_;
  // On the heap, so that an outbox moves (a write under way keeps the signal's slot).
  std::unique_ptr<asio::cancellation_signal> stop_write_ =
      std::make_unique<asio::cancellation_signal>();
};

}  // namespace multilane::runtime
