// runtime/tcp/frame_reader.hpp — one stream's reader of frames (wire.hpp), shared by the
// Engine's incoming streams and StreamSet's streams.
//
// The reader reads a header, checks it (decode_frame_header), and asks its owner, a FrameSink,
// what to do with the payload: read it straight into a span the owner chose (the posted
// receive's buffer, an early-data buffer), drop it, park until the owner calls resume(), or
// stop (the owner refused the frame and closed or failed the stream). Payload bytes are
// reported as each read returns them, so an owner can count bytes as they arrive; each read
// offers the kernel everything that is left of the span, which keeps a large chunk at a few
// system calls. When the payload is in, the owner hears frame_done() and the reader goes on
// with the next header.
//
// The owner may stop the rest of a payload from landing in its span (stop_payload(): the
// message completed from other streams); that rest is read and dropped.
//
// Large payloads: from kQuickAcknowledgedPayload bytes on, the reader asks the kernel to
// acknowledge at once (TCP_QUICKACK) before it reads the payload. A rank that both receives and
// sends on a connection (a ping-pong, a gather's root answering) puts it in TCP's interactive
// mode, where acknowledgements wait for data to ride on, and a large payload's sender then idles
// waiting for them. Below that size the extra system call costs more than it saves
// (docs/runtime.md, "Receiving", has the figures).
//
// Small frames: the reader reads headers through a small staging buffer, taking whatever the
// kernel has up to its size, so a small frame (header and payload) costs one system call
// instead of two, and several small frames that arrived together cost one. Staged payload
// bytes are copied into the span; the rest of a larger payload is read straight into it. The
// sink is never called from within the owner's own call to start() or resume(): staged bytes
// found then are taken in a handler of their own, as bytes from the socket would be. After a
// read that took all the kernel had, the next header is read from a handler of its own (the
// owner's caller has moved on by then): no read that can only fail sits between a frame's
// arrival and the owner's answer to it. With `polled` given and room in it, that read is a
// non-blocking recv, and a reader whose socket is empty, between frames or inside a payload
// whose bytes are still coming, lists itself there while a spinning caller polls
// (polled_readers.hpp). Otherwise it is asio's read, which waits for readiness without
// re-arming the socket (an async_wait re-arms it with a system call of its own).
//
// Awaited frames: a reader that follows its peer's demand (follow_demand(), see
// polled_readers.hpp) leaves the socket to the spinning caller without reading it while no
// receive waits for its frames. Where this rank sent to the peer between the peer's last two
// frames (an exchange, not a stream one way), a polled read of headers takes no more than the
// previous frame's size, so a frame that came after the awaited one stays in the kernel until
// this rank's next frame to the peer has carried the acknowledgement. A stream one way (a
// gather's root) is read as before, as much as the stage takes, which costs fewer reads.
//
// Quiet listed sockets: the reactor watches every socket (epoll), so each arriving segment
// also runs the reactor's wake-up callback, in the sender's system call on loopback. While a
// reader is listed, the spinning caller reads its socket anyway, so the reader raises the
// socket's low-water mark (kQuietLowWater, set_receive_low_water()) and the kernel skips that
// callback for small arrivals; it lowers the mark again before any wait through the reactor
// (and when destroyed), not each time it is read, since each change is a system call
// (docs/runtime.md has the figures).
//
// Threading: the reader runs on the thread running the socket's io_context; the owner calls it
// on that thread only, and its sink is called from there. The owner owns the socket, the
// sink and the scratch space, and keeps them (and the spans it hands out) alive while busy()
// or, for owners held by shared_ptr, through keep_alive(). Closing the socket ends the reader
// without a report: the owner closed it and knows why.
#pragma once

#include <array>
#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/tcp/handler_memory.hpp"
#include "runtime/tcp/polled_readers.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {

class FrameReader;

// The owner's answer to "where does this frame's payload go?".
class FramePlacement {
 public:
  enum class Action { Read, Discard, Park, Stop };
  // Into `into`, whose size is the frame's length.
  static FramePlacement read(std::span<std::byte> into) { return {Action::Read, into}; }
  static FramePlacement discard() { return {Action::Discard, {}}; }
  static FramePlacement park() { return {Action::Park, {}}; }
  static FramePlacement stop() { return {Action::Stop, {}}; }

  Action action() const { return action_; }
  std::span<std::byte> into() const { return into_; }

 private:
  FramePlacement(Action action, std::span<std::byte> into) : action_(action), into_(into) {}
  Action action_;
  std::span<std::byte> into_;
};

class FrameSink {
 public:
  // Checks a valid header beyond what decode_frame_header() does, once per frame; false: the
  // owner refused the frame (and closed or failed the stream), nothing more is read.
  virtual bool admit(FrameReader& reader, const FrameHeader& header);
  // Where the payload goes; asked when the header arrives and again on each resume().
  virtual FramePlacement place(FrameReader& reader, const FrameHeader& header) = 0;
  // `bytes` payload bytes landed at `offset` of the placed span.
  virtual void landed(FrameReader& reader, const FrameHeader& header, std::uint64_t offset,
                      std::size_t bytes);
  // The whole payload is in its span (not said of dropped frames).
  virtual void frame_done(FrameReader& reader, const FrameHeader& header) = 0;
  // The header is not valid; `error` names the stream (decode_frame_header()).
  virtual void bad_header(FrameReader& reader, const std::string& error) = 0;
  // Reading failed or the peer closed; `between_frames`: before the first byte of a header.
  virtual void ended(FrameReader& reader, const asio::error_code& error, bool between_frames) = 0;
  // Held by every outstanding read, for owners that a shared_ptr keeps alive.
  virtual std::shared_ptr<void> keep_alive();

 protected:
  ~FrameSink() = default;
};

class FrameReader {
 public:
  // `scratch` receives dropped payload (sized on first use); readers on one thread may share it.
  // `prefix`: bytes before every frame header (the aggregate routers' route header), at most
  // kMaxPrefix, handed to the sink through prefix(). `polled`: see above; it outlives the
  // reader.
  FrameReader(asio::ip::tcp::socket& socket, const FrameCheck& check, std::string name,
              FrameSink& sink, std::vector<std::byte>& scratch, std::size_t prefix = 0,
              PolledReaders* polled = nullptr);
  static constexpr std::size_t kMaxPrefix = 32;
  static constexpr std::size_t kQuickAcknowledgedPayload = 512 * 1024;
  // Received bytes a listed reader's socket may hold before the kernel signals the reactor.
  static constexpr int kQuietLowWater = 64 * 1024;
  // The staging buffer's size: what one read of headers (and small frames) takes at most.
  static constexpr std::size_t kStageBytes = 4096;
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;
  ~FrameReader();

  // Reads the next header; does nothing unless idle (not started, or stopped by the owner).
  void start();
  // A parked frame: asks place() again.
  void resume();
  // The rest of the current payload is dropped instead of landing in its span.
  void stop_payload();

  // A read is outstanding: its handler still refers to the socket, the sink and the span (a
  // reader listed in PolledReaders has none).
  bool busy() const { return reading_; }
  bool parked() const { return phase_ == Phase::Parked; }
  // The header of the frame being placed, read or parked.
  const FrameHeader& header() const { return header_; }
  // The bytes before it (as many as the constructor's `prefix`).
  std::span<const std::byte> prefix() const { return {prefix_bytes_.data(), prefix_}; }
  const std::string& name() const { return name_; }

  // The receives that wait for this stream's frames and the sends to its peer; `demand`
  // outlives the reader.
  void follow_demand(const StreamDemand& demand) { demand_ = &demand; }
  // Whether a spinning caller reads this reader now: a receive waits for its frames, a frame is
  // under way, or it follows no demand.
  bool awaited() const {
    return demand_ == nullptr || demand_->waiting > 0 || phase_ == Phase::Payload || staged() > 0;
  }

 private:
  friend class PolledReaders;
  // For PolledReaders: reads the socket of a listed reader; true if it took bytes or ended.
  bool read_polled();
  // Waits for the socket to be readable through the reactor, then reads the next header.
  void wait_readable();

  enum class Phase { Idle, Header, Placing, Parked, Payload, Discard, Delivering, Ended };
  // Bytes read from the socket and not taken yet: the next header and what follows it.
  std::size_t staged() const { return stage_end_ - stage_begin_; }
  std::span<std::byte> take_staged(std::size_t most);
  // Runs `step` now when inside one of this reader's handlers, else in a handler of its own.
  template <typename Step>
  void continue_with(Step step);
  void read_header();
  void read_header_later();
  void stage_now();
  void read_stage_through_reactor();
  bool list_for_polling();
  // Lowers a quiet socket's low-water mark: the reactor hears of every arrival again.
  void signal_arrivals();
  // A read's outcome, as asio hands it to a handler.
  struct Read {
    asio::error_code error;
    std::size_t bytes = 0;
  };
  std::optional<Read> receive_now(std::span<std::byte> into);
  bool emptied(const Read& read, std::span<std::byte> asked) const;
  std::span<std::byte> stage_room() { return std::span(stage_).subspan(stage_end_); }
  // What a polled read of headers asks for: the stage's room, or, in an exchange (answered_),
  // the rest of a frame of the previous frame's size if that is less.
  std::span<std::byte> polled_stage_room();
  // `emptied`: the read took all the kernel had, or all it asked for of a polled stage room.
  void on_staged(const asio::error_code& error, std::size_t bytes, bool emptied);
  void header_arrived();
  void payload_from_stage();
  void place();
  void read_payload();
  // `socket_emptied`: the read took all the kernel had, so the next one waits for more.
  void on_payload(const asio::error_code& error, std::size_t bytes, bool socket_emptied);
  void discard(std::uint64_t bytes);
  void finish_frame();
  void end(const asio::error_code& error, bool between_frames);

  asio::ip::tcp::socket& socket_;
  FrameCheck check_;
  std::string name_;
  FrameSink& sink_;
  std::vector<std::byte>& scratch_;
  Phase phase_ = Phase::Idle;
  bool reading_ = false;
  bool stopping_ = false;  // stop_payload() was called for the current payload
  std::size_t prefix_;
  std::array<std::byte, kMaxPrefix> prefix_bytes_{};
  FrameBytes header_bytes_{};
  FrameHeader header_;
  std::span<std::byte> into_;
  std::size_t done_ = 0;          // payload bytes in `into_`
  bool payload_drained_ = false;  // the last payload read took all the kernel had
  asio::cancellation_signal stop_read_;
  HandlerMemory handler_memory_;  // for the reads, waits and posts this reader has in flight
  bool in_handler_ = false;       // one of this reader's handlers is running
  std::array<std::byte, kStageBytes> stage_{};
  std::size_t stage_begin_ = 0;
  std::size_t stage_end_ = 0;
  bool drained_ = false;          // the last read into the stage emptied the socket (on_staged)
  std::size_t last_frame_ = 0;    // prefix, header and payload bytes of the previous frame
  std::uint64_t sends_seen_ = 0;  // demand_->sends when the previous frame arrived
  bool answered_ = false;         // this rank sent to the peer between its previous two frames
  PolledReaders* polled_;
  const StreamDemand* demand_ = nullptr;
  bool listed_ = false;  // in polled_, waiting to be read by a spinning caller
  bool quiet_ = false;   // the socket's low-water mark is kQuietLowWater (never while a
                         // reactor operation of this reader is outstanding)
};

}  // namespace multilane::runtime
