// runtime/streams/stream_set_impl.hpp — the inside of a StreamSet, for the stream_set_*.cpp
// files that implement its parts; not for its users (see stream_set.hpp and docs/runtime.md,
// "The WAN stream core").
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/byte_ranges.hpp"
#include "runtime/tcp/chunk_feed.hpp"
#include "runtime/tcp/early_budget.hpp"
#include "runtime/tcp/frame_reader.hpp"
#include "runtime/tcp/stream_progress.hpp"
#include "runtime/tcp/striped_sender.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {

struct StreamSet::Impl {
  // Both in stream_set_lifecycle.cpp. Starts every stream's reader.
  Impl(std::shared_ptr<asio::io_context> io, std::vector<asio::ip::tcp::socket> sockets,
       const StreamOptions& options);
  ~Impl();

  // Where the frame a stream's reader is placing or reading goes.
  enum class Into { Nothing, Buffer, Ahead };

  // Receives its reader's frames (FrameSink) for the set, and sends through the set's striped
  // sender (its outbox is the StripeStream's). Moved only before the readers start: they refer
  // to the stream.
  struct Stream final : FrameSink, StripeStream {
    Stream(asio::ip::tcp::socket s, Impl& owner)
        : set(&owner), socket(std::move(s)), name(peer_name(socket)) {}
    int fd() override { return socket.is_open() ? socket.native_handle() : -1; }
    bool open() const override { return socket.is_open(); }
    Impl* set;
    asio::ip::tcp::socket socket;
    std::string name;
    // Receiving.
    std::unique_ptr<FrameReader> reader;
    Into into = Into::Nothing;
    std::vector<std::byte> ahead;  // the payload of a frame read ahead (Into::Ahead)
    bool closed = false;           // the peer closed this stream between frames

    bool admit(FrameReader&, const FrameHeader& h) override { return set->admit(h); }
    FramePlacement place(FrameReader&, const FrameHeader& h) override {
      return set->place(*this, h);
    }
    void landed(FrameReader&, const FrameHeader& h, std::uint64_t offset,
                std::size_t bytes) override {
      set->landed(*this, h, offset, bytes);
    }
    void frame_done(FrameReader&, const FrameHeader& h) override { set->frame_done(*this, h); }
    void bad_header(FrameReader&, const std::string& error) override {
      set->fail({ErrorKind::protocol, error});
    }
    void ended(FrameReader&, const asio::error_code& ec, bool between_frames) override {
      set->read_failed(*this, ec, between_frames);
    }
  };

  // A frame of the message after the posted receive's, read while that receive was incomplete.
  // A sender moves on to its next message while copies of its last one's stalled bytes may still
  // have to go out, behind the next message's frames on the same stream; a receiver that let
  // such a stream wait for the next receive would never see those copies. So it reads such
  // frames ahead into memory (up to a budget) and copies them in when their receive is posted.
  struct EarlyFrame {
    FrameHeader header;
    std::vector<std::byte> payload;
  };

  struct Receive {
    bool active = false;
    std::uint64_t id = 0;
    std::uint64_t sequence = 0;
    std::span<std::byte> buffer;
    ReceiveSize size = ReceiveSize::Exact;
    std::optional<std::uint64_t> total{};  // the message's length, once known
    ByteRanges arrived{};                  // bytes of the message that arrived
    bool any_frame = false;                // a frame arrived (an empty message is one empty frame)
    bool complete = false;
    bool sender_waits = false;  // its sender waits for TCP's acknowledgement of the last bytes
  };

  // The posted send: its message in flight through the striped sender.
  struct Send {
    bool active = false;
    std::shared_ptr<StripedMessage> message;
    // Striped, with resend_stalled: the message's bytes are kept until every one is
    // acknowledged, so that a stream stalling after its last write can still be replaced: the
    // caller's message until then, or (keeps_tail, on a long path) a copy of its end.
    bool keeps_until_acknowledged = false;
    bool keeps_tail = false;
    bool striped = false;
  };

  std::shared_ptr<asio::io_context> io;
  std::vector<Stream> streams;
  StreamOptions options;
  std::string peer;
  Receive receive;
  Send send;
  // The last split send after its caller got the message back: the bytes TCP had not
  // acknowledged then, copied, until it has (at most one message's tail is kept). The caller's
  // next message is already on its way meanwhile.
  std::shared_ptr<StripedMessage> tail;
  SendCounters counters;
  std::uint64_t next_send_id = 0;
  std::uint64_t next_recv_id = 0;
  Outcome failure;                 // set once broken
  bool ended_by_peer = false;      // broken because the peer closed every stream between messages
  bool peer_gone = false;          // broken because the peer closed or reset a stream
  std::vector<std::byte> scratch;  // where late copies are dropped (FrameReader)
  std::vector<EarlyFrame> early;   // frames of the next message, read ahead
  EarlyBudget early_bytes;         // their payload, reads under way included
  std::unique_ptr<asio::steady_timer> probe_timer;
  bool probing = false;       // the probe timer is armed
  StripeLink link{1, false};  // the streams, watched together (set up with them)
  StripedSender sender;
  bool peer_resends = false;  // the peer re-sends stalled shares: late copies may be on the way
  bool closing = false;       // lingering before closing: every frame is dropped

  // --- receiving: the posted receive, what the streams' readers do with frames
  // (stream_set_receive.cpp) ---
  void start_receive(std::span<std::byte> buffer, std::uint64_t sequence, ReceiveSize size);
  bool recv_done() const;
  std::uint64_t finish_recv();
  std::string received_text() const;
  void start_readers();
  bool admit(const FrameHeader& h);
  FramePlacement place(Stream& s, const FrameHeader& h);
  void landed(Stream& s, const FrameHeader& h, std::uint64_t offset, std::size_t bytes);
  void frame_done(Stream& s, const FrameHeader& h);
  bool already_complete(std::uint64_t message_id) const;
  bool accept_header(const std::string& from, const FrameHeader& h);
  std::string length_problem(const FrameHeader& h) const;
  void check_complete();
  void complete_receive();
  void read_failed(Stream& s, const asio::error_code& ec, bool between_frames);
  void check_all_closed();

  // --- early frames of the next message (stream_set_read_ahead.cpp) ---
  bool may_read_ahead(const FrameHeader& h) const;
  FramePlacement read_ahead(Stream& s, const FrameHeader& h);
  void read_ahead_done(EarlyFrame frame);
  void take_early(const EarlyFrame& frame);

  // --- sending: the posted send through the striped sender (stream_set_send.cpp) ---
  void start_send(std::span<const std::byte> message, std::uint64_t sequence);
  void send_whole(const std::shared_ptr<StripedMessage>& message);
  void send_split(const std::shared_ptr<StripedMessage>& message);
  bool send_done() const;
  void finish_send();
  std::string sent_text() const;
  void pump(Stream& s);
  void pump_all();
  void write_failed(Stream& s, const asio::error_code& ec);
  Stream& stream_for_whole_message();
  static ChunkFeed equal_shares(std::uint64_t size, int streams);
  bool governed() const;

  // --- the watch of the streams and the kept tail (stream_set_watch.cpp) ---
  void arm_probe();
  bool watching() const;
  void look_at_streams();
  bool long_path();
  void settle_tail();

  // --- lifecycle: failing, waiting, timeouts, closing (stream_set_lifecycle.cpp) ---
  void fail(Failure reason);
  bool idle() const;
  void await();
  void throw_failure();
  void abandon();
  void linger();
  void settle_before_closing();
  Failure timed_out() const;
  void check_usable() const;
};

}  // namespace multilane::runtime
