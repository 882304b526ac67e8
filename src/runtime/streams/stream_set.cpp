// runtime/streams/stream_set.cpp — striped sends and in-place receives over K streams (see
// stream_set.hpp).
//
// Every stream has one persistent reader: read a header, then read the chunk's bytes into the
// posted buffer at the header's offset, then read the next header. A header that belongs to a
// later message (the streams run ahead of each other) is parked on its stream until the
// receive of that message is posted; a chunk of a message already complete (a copy re-sent on
// another stream arrived first) is read into scratch space and dropped. Readers keep running
// between calls, so no bytes are ever half-consumed; the io_context is only driven inside
// calls, by the calling thread.
//
// Every stream also has an outbox of frames, written one after another. A frame either
// borrows the posted send's message or owns its bytes (the rest of a frame interrupted to
// re-send a stalled stream's share). A striped send hands its pieces out one at a time
// (chunk_feed.hpp): a stream whose outbox ran empty takes the next piece. A send is done when
// every piece was handed out and no frame borrows its message any more.
#include "runtime/streams/stream_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <optional>
#include <utility>

#include "multilane/errors.hpp"
#include "runtime/streams/byte_ranges.hpp"
#include "runtime/streams/chunk_feed.hpp"
#include "runtime/streams/stall_watch.hpp"
#include "runtime/transport/io_wait.hpp"
#include "runtime/transport/transport_error.hpp"
#include "runtime/transport/wire.hpp"

namespace multilane::runtime {

namespace {

// How often a posted striped send reads its streams' acknowledgements (when resend_stalled
// is on): it looks for stalled streams and completes when every byte is acknowledged.
constexpr auto kProbeInterval = std::chrono::milliseconds(1);
// Longest wait for a peer that re-sends to close too (see linger()).
constexpr auto kLinger = std::chrono::seconds(3);
// The smallest piece of a striped message a stream is handed (chunk_feed.hpp): a frame's
// header is then under 0.5% of it, and a stream at 15 Mbit/s (1 Gbit/s over 64 streams)
// sends it in about 9 ms, which bounds how long the last pieces keep a message waiting.
constexpr std::uint64_t kSmallestPiece = 16 * 1024;
// Scratch space for dropping late copies.
constexpr std::size_t kDiscardBytes = 64 * 1024;
// Frames of the next message are read ahead into memory up to the posted receive's size,
// and at least this much (see EarlyFrame).
constexpr std::uint64_t kLeastReadAhead = 4 << 20;

// One frame in a stream's outbox.
struct Outgoing {
  FrameBytes header{};
  ByteRange range;                      // the payload's place in the message
  std::span<const std::byte> borrowed;  // the payload, in the posted send's message
  std::vector<std::byte> owned;         // or: header and payload of its own (see `copy`)
  std::uint64_t message_id = 0;         // of a copy (borrowed frames are the posted send's)
  // Owned frames are the unwritten rest of an interrupted frame, or (copy) a copy of the kept
  // tail's bytes, which is watched until acknowledged like the send's own frames.
  bool copy = false;
  bool borrows() const { return owned.empty(); }
};

// A frame that went to the kernel and may not be acknowledged yet: its payload ends at
// `stream_end` of the stream's byte count.
struct Written {
  std::uint64_t stream_end = 0;
  ByteRange range;
  std::uint64_t message_id = 0;  // the posted send's, or the kept tail's
};

struct Stream {
  explicit Stream(asio::ip::tcp::socket s) : socket(std::move(s)), name(peer_name(socket)) {}
  asio::ip::tcp::socket socket;
  std::string name;
  // Receiving.
  FrameBytes header_in{};
  std::optional<FrameHeader> parked;  // header of a later message
  bool reading = false;               // a read is outstanding
  bool into_buffer = false;           // ... and it writes into the posted receive buffer
  bool closed = false;                // the peer closed this stream between frames
  std::unique_ptr<asio::cancellation_signal> stop_read =
      std::make_unique<asio::cancellation_signal>();
  // Sending.
  std::deque<Outgoing> outbox;
  bool writing = false;          // the outbox's front is being written
  bool interrupting = false;     // its write was cancelled to re-send this stream's share
  bool stuck = false;            // stalled at the last look (stall_watch.hpp)
  std::uint64_t handed = 0;      // bytes ever handed to the kernel
  std::vector<Written> written;  // a kept send's frames not known to be acknowledged
  std::unique_ptr<asio::cancellation_signal> stop_write =
      std::make_unique<asio::cancellation_signal>();

  bool writes_borrowed() const { return writing && outbox.front().borrows(); }
  bool idle_sender() const { return outbox.empty() && !writing; }
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
  std::optional<std::uint64_t> total;  // the message's length, once known
  ByteRanges arrived;                  // bytes of the message that arrived
  bool any_frame = false;              // a frame arrived (an empty message is one empty frame)
  bool complete = false;
  bool sender_waits = false;  // its sender waits for TCP's acknowledgement of the last bytes
};

struct Send {
  bool active = false;
  std::uint64_t id = 0;
  std::uint64_t sequence = 0;
  std::span<const std::byte> message;
  ChunkFeed feed;            // striped: the pieces not yet handed to a stream
  std::uint64_t sent = 0;    // payload bytes handed to the kernel (a re-sent range twice)
  int borrowing_frames = 0;  // frames that still refer to `message`
  // Striped, with resend_stalled: the message's bytes are kept until every one is
  // acknowledged, so that a stream stalling after its last write can still be replaced: the
  // caller's message until then, or (keeps_tail, on a long path) a copy of its end.
  bool keeps_until_acknowledged = false;
  bool keeps_tail = false;
  // Striped, for the stream governor: whether a stream carrying it stalled, where the
  // streams' acknowledgements stood when it began (to tell the rate the path delivers), and
  // the streams' round trip and window at the last look.
  bool striped = false;
  bool stalled = false;
  Clock::time_point started{};
  std::uint64_t acknowledged_at_start = 0;
  PathSample path;

  bool all_handed_out() const { return borrowing_frames == 0 && feed.empty(); }
};

// The last split send after its caller got the message back: the bytes TCP had not
// acknowledged then, copied, until it has; the share of a stream that stalls holding some of
// them goes out again from here (the caller's next message is already on its way).
struct KeptTail {
  bool active = false;
  std::uint64_t id = 0;
  std::uint64_t sequence = 0;
  std::uint64_t total = 0;                                         // the message's size
  std::vector<std::pair<ByteRange, std::vector<std::byte>>> kept;  // disjoint, in order
  std::uint64_t kept_bytes = 0;
  ByteRanges delivered;  // kept bytes the peer acknowledged, on whichever stream
  ChunkFeed resend;      // kept bytes to send again, taken before the posted send's pieces

  // The kept bytes of `range`, which lies within one kept range.
  std::span<const std::byte> bytes(const ByteRange& range) const {
    for (const auto& [where, data] : kept) {
      if (range.offset >= where.offset && range.offset + range.length <= where.end()) {
        return std::span(data).subspan(range.offset - where.offset, range.length);
      }
    }
    throw std::logic_error("a re-sent range of a kept tail is not kept");
  }
};

}  // namespace

struct StreamSet::Impl {
  std::shared_ptr<asio::io_context> io;
  std::vector<Stream> streams;
  StreamOptions options;
  std::string peer;
  Receive receive;
  Send send;
  KeptTail tail;
  SendCounters counters;
  std::uint64_t next_send_id = 0;
  std::uint64_t next_recv_id = 0;
  std::string failure;             // set once broken
  bool ended_by_peer = false;      // broken because the peer closed every stream between messages
  bool peer_gone = false;          // broken because the peer closed or reset a stream
  std::vector<std::byte> scratch;  // where late copies are dropped
  std::vector<EarlyFrame> early;   // frames of the next message, read ahead
  std::uint64_t early_bytes = 0;   // their payload, reads under way included
  std::unique_ptr<asio::steady_timer> probe_timer;
  bool probing = false;  // the probe timer is armed
  std::optional<StallWatch> stall_watch;
  StreamGovernor governor{{.streams = 1, .adapts = false}};
  bool peer_resends = false;  // the peer re-sends stalled shares: late copies may be on the way
  bool closing = false;       // lingering before closing: every frame is dropped

  // --- receiving ---

  void read_header(Stream& s) {
    s.reading = true;
    asio::async_read(s.socket, asio::buffer(s.header_in),
                     [this, &s](const asio::error_code& ec, std::size_t n) {
                       s.reading = false;
                       if (ec) return read_failed(s, ec, n == 0);
                       on_header(s);
                     });
  }

  void on_header(Stream& s) {
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

  bool may_read_ahead(const FrameHeader& h) const {
    if (!receive.active || receive.complete || h.message_id != receive.id + 1) return false;
    const std::uint64_t budget = std::max<std::uint64_t>(receive.buffer.size(), kLeastReadAhead);
    return early_bytes + h.length <= budget;
  }

  void read_ahead(Stream& s, const FrameHeader& h) {
    auto payload = std::make_shared<std::vector<std::byte>>(h.length);
    early_bytes += h.length;
    s.reading = true;
    asio::async_read(s.socket, asio::buffer(*payload),
                     [this, &s, h, payload](const asio::error_code& ec, std::size_t) {
                       s.reading = false;
                       if (ec) return read_failed(s, ec, false);
                       read_ahead_done(EarlyFrame{h, std::move(*payload)});
                       read_header(s);
                     });
  }

  // Its receive may have been posted meanwhile.
  void read_ahead_done(EarlyFrame frame) {
    if (receive.active && frame.header.message_id == receive.id) return take_early(frame);
    if (frame.header.message_id < next_recv_id || closing) {
      early_bytes -= frame.header.length;
      return;
    }
    early.push_back(std::move(frame));
  }

  void take_early(const EarlyFrame& frame) {
    const FrameHeader& h = frame.header;
    early_bytes -= h.length;
    if (!accept_header(peer, h) || receive.complete) return;
    std::copy(frame.payload.begin(), frame.payload.end(),
              receive.buffer.begin() + static_cast<std::ptrdiff_t>(h.offset));
    receive.arrived.add(h.offset, h.length);
    check_complete();
  }

  // A copy of bytes that arrived on another stream first.
  bool already_complete(std::uint64_t message_id) const {
    if (receive.active && message_id == receive.id) return receive.complete;
    return message_id < (receive.active ? receive.id : next_recv_id);
  }

  void take_frame(Stream& s, const FrameHeader& h) {
    if (!accept_header(s.name, h)) return;
    if (h.length == 0) return frame_arrived(s);
    read_payload(s, h, 0);
  }

  // Checks a frame of the posted receive against it (failing the set if it does not fit) and
  // records what it says about the message.
  bool accept_header(const std::string& from, const FrameHeader& h) {
    if (h.sequence != receive.sequence) {
      fail(fmt::format("message {} from {} belongs to collective call {}, expected {}",
                       h.message_id, from, h.sequence, receive.sequence));
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

  // Reads the rest of a frame's payload (from byte `done` on) straight into the buffer, as
  // it comes: bytes count as arrived at once, not when the whole frame is in, because the
  // rest of a frame on a stalled stream may come over other streams (and the sender knows
  // the peer has what its TCP acknowledged).
  void read_payload(Stream& s, const FrameHeader& h, std::uint64_t done) {
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
  void discard(Stream& s, std::uint64_t bytes) {
    if (bytes == 0) return read_header(s);
    if (scratch.empty()) scratch.resize(kDiscardBytes);
    const std::size_t piece =
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kDiscardBytes));
    s.reading = true;
    asio::async_read(s.socket, asio::buffer(scratch.data(), piece),
                     [this, &s, bytes](const asio::error_code& ec, std::size_t n) {
                       s.reading = false;
                       if (ec) return read_failed(s, ec, false);
                       discard(s, bytes - n);
                     });
  }

  // What is wrong with the message length a frame announces, or "".
  std::string length_problem(const FrameHeader& h) const {
    if (receive.size == ReceiveSize::Exact && h.total != receive.buffer.size()) {
      return fmt::format("message {} from {} has {} bytes, the receive buffer {}", h.message_id,
                         peer, h.total, receive.buffer.size());
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

  void frame_arrived(Stream& s) {
    check_complete();
    read_header(s);
  }

  void check_complete() {
    if (!receive.complete && receive.any_frame && receive.total &&
        receive.arrived.bytes() >= *receive.total) {
      complete_receive();
    }
  }

  // Every byte is in: reads still writing into the buffer (slower copies) are stopped, so
  // nothing touches the buffer once the caller has it back; they drop the rest of their frame.
  // A sender that re-sends waits for the acknowledgement of its last bytes, which the kernel
  // may delay by 40 ms or more: they go out now.
  void complete_receive() {
    receive.complete = true;
    for (Stream& t : streams) {
      if (t.into_buffer) t.stop_read->emit(asio::cancellation_type::terminal);
      if (receive.sender_waits && t.socket.is_open()) {
        acknowledge_now(t.socket.native_handle());
      }
    }
  }

  // `between_frames`: the stream ended cleanly before a header, not inside a frame.
  void read_failed(Stream& s, const asio::error_code& ec, bool between_frames) {
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
  void check_all_closed() {
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

  void start_receive(std::span<std::byte> buffer, std::uint64_t sequence, ReceiveSize size) {
    if (receive.active) throw UsageError(fmt::format("a receive from {} is already posted", peer));
    receive = Receive{};
    receive.active = true;
    receive.id = next_recv_id;
    receive.sequence = sequence;
    receive.buffer = buffer;
    receive.size = size;
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

  std::string received_text() const {
    if (!receive.total) {
      return fmt::format("received {} bytes of a message of up to {}", receive.arrived.bytes(),
                         receive.buffer.size());
    }
    return fmt::format("received {} of {} bytes", receive.arrived.bytes(), *receive.total);
  }

  // --- sending ---

  void start_send(std::span<const std::byte> message, std::uint64_t sequence) {
    if (send.active) throw UsageError(fmt::format("a send to {} is already posted", peer));
    send = Send{};
    send.active = true;
    send.id = next_send_id;
    send.sequence = sequence;
    send.message = message;
    if (stall_watch) refresh_stuck();
    const int k = static_cast<int>(streams.size());
    if (is_striped(message.size(), k, options.stripe)) {
      send.feed = options.equal_shares
                      ? equal_shares(message.size(), k)
                      : ChunkFeed(message.size(), k, kSmallestPiece, largest_piece());
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

  // Pieces no longer than a stream's unsent queue: a stream that stalls owes the rest of the
  // piece it started (the frame's header announced it), and writes it although its bytes go
  // out again on other streams; a short piece keeps that duplicate small.
  std::uint64_t largest_piece() const {
    const auto limit = static_cast<std::uint64_t>(options.unsent_limit);
    return limit > 0 ? std::min(options.stripe.max_chunk, limit) : options.stripe.max_chunk;
  }

  // The streams in use adapt to stalls (stream_governor.hpp). Not on a paced path: its streams
  // are already kept below the path's rate, each at its share of it, so fewer of them would
  // only be slower. Not through a relay: the streams' round trip and stalls are those of the
  // hop to the relay (a full relay buffer looks like a stall), not of the path beyond it, which
  // may need every stream.
  bool governed() const {
    return options.adapt_streams && options.resend_stalled && !options.equal_shares &&
           options.pacing_rate == 0 && !options.relayed;
  }

  void start_rate_measure() {
    send.started = Clock::now();
    for (Stream& s : streams) send.acknowledged_at_start += probe(s).acknowledged;
  }

  // Some stream's shortest round trip is at least options.tail_round_trip.
  bool long_path() {
    return std::any_of(streams.begin(), streams.end(), [this](Stream& s) {
      return probe(s).least_round_trip >= options.tail_round_trip;
    });
  }

  // One piece per stream (all are idle at the start of a send, so each takes one).
  static ChunkFeed equal_shares(std::uint64_t size, int streams) {
    const std::uint64_t share =
        (size + static_cast<std::uint64_t>(streams) - 1) / static_cast<std::uint64_t>(streams);
    return ChunkFeed(size, streams, share, share);
  }

  // A message sent whole rotates over the streams that have nothing to write and are not
  // stalled (over all streams when none is such).
  Stream& stream_for_whole_message() {
    std::vector<Stream*> usable;
    for (Stream& s : streams) {
      if (s.idle_sender() && !s.stuck) usable.push_back(&s);
    }
    if (usable.empty()) {
      for (Stream& s : streams) usable.push_back(&s);
    }
    return *usable[send.id % usable.size()];
  }

  // Hands the next piece of the posted send to every stream in use that has nothing to write
  // and is not stalled: the first governor.in_use() streams that are not stalled. Stalled
  // streams get pieces only when no other stream is there to take them.
  void feed_streams() {
    if (!failure.empty() || (!send.active && tail.resend.empty())) return;
    bool others_will_take = false;
    int in_use = governor.in_use();
    for (Stream& s : streams) {
      if (s.stuck) continue;
      if (in_use-- == 0) break;
      if (s.idle_sender()) feed(s);
      others_will_take = others_will_take || !s.idle_sender();
    }
    if (others_will_take) return;
    for (Stream& s : streams) {
      if (s.idle_sender()) feed(s);
    }
  }

  // A copy of the kept tail's bytes first (the peer waits for them), else the next piece.
  void feed(Stream& s) {
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

  void queue_frame(Stream& s, const ByteRange& range, std::uint16_t flags) {
    Outgoing frame;
    frame.header =
        encode_frame_header(FrameHeader{flags, options.job_id, send.sequence, send.id, range.offset,
                                        range.length, send.message.size()});
    frame.range = range;
    frame.borrowed = send.message.subspan(range.offset, range.length);
    s.outbox.push_back(std::move(frame));
    ++send.borrowing_frames;
  }

  void queue_tail_copy(Stream& s, const ByteRange& range) {
    Outgoing frame;
    const FrameBytes header = encode_frame_header(
        FrameHeader{kFrameStriped | kFrameAcknowledgeSoon | kFrameResent, options.job_id,
                    tail.sequence, tail.id, range.offset, range.length, tail.total});
    const auto payload = tail.bytes(range);
    frame.owned.reserve(header.size() + payload.size());
    frame.owned.assign(header.begin(), header.end());
    frame.owned.insert(frame.owned.end(), payload.begin(), payload.end());
    frame.range = range;
    frame.message_id = tail.id;
    frame.copy = true;
    s.outbox.push_back(std::move(frame));
  }

  void write_next(Stream& s) {
    if (s.writing || s.outbox.empty() || !failure.empty()) return;
    const Outgoing& frame = s.outbox.front();
    std::array<asio::const_buffer, 2> parts{
        asio::buffer(frame.header), asio::buffer(frame.borrowed.data(), frame.borrowed.size())};
    if (!frame.borrows()) parts = {asio::buffer(frame.owned), asio::const_buffer{}};
    s.writing = true;
    asio::async_write(
        s.socket, parts,
        asio::bind_cancellation_slot(
            s.stop_write->slot(), [this, &s](const asio::error_code& ec, std::size_t n) {
              s.writing = false;
              if (ec == asio::error::operation_aborted && s.interrupting && failure.empty()) {
                return interrupted(s, n);
              }
              if (ec) return write_failed(s, ec);
              frame_written(s, n);
            }));
  }

  void frame_written(Stream& s, std::size_t bytes) {
    s.handed += bytes;
    const Outgoing& frame = s.outbox.front();
    if (frame.borrows()) {
      if (send.keeps_until_acknowledged) s.written.push_back({s.handed, frame.range, send.id});
      send.sent += frame.range.length;
      --send.borrowing_frames;
    } else if (frame.copy && tail.active && frame.message_id == tail.id) {
      s.written.push_back({s.handed, frame.range, frame.message_id});
    }
    s.outbox.pop_front();
    if (s.interrupting) {  // the cancel came too late: the frame went whole
      s.interrupting = false;
      resend_share(s, {});
    }
    write_next(s);
    feed_streams();
    if (send.all_handed_out() && send.keeps_until_acknowledged && !send.keeps_tail) {
      forget_all_acknowledged();
    }
  }

  // The front frame's write stopped after `bytes` bytes: its rest is copied out of the message
  // (the stream still owes it to the peer) and its share goes out again.
  void interrupted(Stream& s, std::size_t bytes) {
    s.interrupting = false;
    s.handed += bytes;
    Outgoing& frame = s.outbox.front();
    const std::size_t header_written = std::min(bytes, kFrameHeaderSize);
    const std::size_t payload_written = bytes - header_written;
    if (payload_written > 0) {
      s.written.push_back({s.handed, {frame.range.offset, payload_written}, send.id});
      send.sent += payload_written;
    }
    const ByteRange unwritten{frame.range.offset + payload_written,
                              frame.range.length - payload_written};
    std::vector<std::byte> rest(frame.header.begin() + static_cast<std::ptrdiff_t>(header_written),
                                frame.header.end());
    const auto payload_rest = frame.borrowed.subspan(payload_written);
    rest.insert(rest.end(), payload_rest.begin(), payload_rest.end());
    frame.owned = std::move(rest);
    frame.borrowed = {};
    --send.borrowing_frames;
    resend_share(s, unwritten);
    write_next(s);
  }

  // Sends again, on other streams, what `s` may not have delivered of the posted send: its
  // unacknowledged bytes and `unwritten` (the rest of its interrupted frame). They go back to
  // the feed, ahead of the bytes never sent. A stream takes a piece only when its outbox is
  // empty and writes it at once, so it holds no borrowed frame it has not started.
  void resend_share(Stream& s, const ByteRange& unwritten) {
    ByteRanges doubt = take_doubt(s, send.id);
    doubt.add(unwritten);
    count_stall(doubt);
    send.feed.give_back(doubt.ranges());
    feed_streams();
  }

  // The same for the kept tail's bytes on `s`: they go out again from the copy, before any
  // piece of the posted send.
  void resend_tail_share(Stream& s) {
    const ByteRanges doubt = take_doubt(s, tail.id);
    count_stall(doubt);
    tail.resend.give_back(doubt.ranges());
    feed_streams();
  }

  // What `s` wrote of message `message_id` and the peer has not acknowledged; forgotten here
  // (it is to go out again). What it has acknowledged of the kept tail counts as delivered.
  ByteRanges take_doubt(Stream& s, std::uint64_t message_id) {
    ByteRanges doubt;
    const std::uint64_t unacknowledged = std::min(probe(s).unacknowledged, s.handed);
    const std::uint64_t delivered_end = s.handed - unacknowledged;  // the peer has all before
    const bool of_tail = tail.active && message_id == tail.id;
    for (const Written& w : s.written) {
      if (w.message_id != message_id) continue;
      const std::uint64_t begin = w.stream_end - w.range.length;
      const std::uint64_t first = std::clamp(delivered_end, begin, w.stream_end);
      if (of_tail) tail.delivered.add(w.range.offset, first - begin);
      doubt.add(w.range.offset + (first - begin), w.stream_end - first);
    }
    std::erase_if(s.written, [&](const Written& w) { return w.message_id == message_id; });
    return doubt;
  }

  void count_stall(const ByteRanges& doubt) {
    ++counters.stalls;
    counters.resent_bytes += doubt.bytes();
  }

  StreamProgress probe(Stream& s) {
    if (!s.socket.is_open()) return {};
    const int fd = s.socket.native_handle();
    return options.progress_probe ? options.progress_probe(fd) : tcp_progress(fd);
  }

  // --- acknowledgements and stalled streams ---

  void arm_probe() {
    if (probing) return;
    if (!probe_timer) probe_timer = std::make_unique<asio::steady_timer>(*io);
    if (!stall_watch) stall_watch.emplace(static_cast<int>(streams.size()));
    probing = true;
    probe_timer->expires_after(kProbeInterval);
    probe_timer->async_wait([this](const asio::error_code& ec) {
      probing = false;
      if (ec || !failure.empty() || !watching()) return;
      look_at_streams();
      if (watching()) arm_probe();
    });
  }

  // Forgets the frames of `s` that the peer acknowledged (they are at the peer, to be read
  // without the network's help).
  void forget_acknowledged(Stream& s, const StreamProgress& progress) {
    const std::uint64_t acknowledged_end = s.handed - std::min(progress.unacknowledged, s.handed);
    std::erase_if(s.written, [&](const Written& w) {
      if (w.stream_end > acknowledged_end) return false;
      if (tail.active && w.message_id == tail.id) tail.delivered.add(w.range);
      return true;
    });
  }

  // A striped send is posted or a tail is kept: the streams' acknowledgements matter.
  bool watching() const { return !send_done() || tail.active; }

  void forget_all_acknowledged() {
    for (Stream& s : streams) {
      if (!s.written.empty()) forget_acknowledged(s, probe(s));
    }
  }

  static bool holds(const Stream& s, std::uint64_t message_id) {
    return std::any_of(s.written.begin(), s.written.end(),
                       [&](const Written& w) { return w.message_id == message_id; });
  }

  // The posted send is over for its caller: what TCP has not acknowledged of it is copied
  // and kept (see KeptTail), so the caller gets its message back about one round trip
  // earlier and the streams go on with the next one meanwhile.
  void keep_tail() {
    ByteRanges unacknowledged;
    for (Stream& s : streams) {
      if (s.written.empty()) continue;
      forget_acknowledged(s, probe(s));
      for (const Written& w : s.written) unacknowledged.add(w.range);
    }
    if (unacknowledged.empty()) return;
    tail = KeptTail{};
    tail.active = true;
    tail.id = send.id;
    tail.sequence = send.sequence;
    tail.total = send.message.size();
    for (const ByteRange& r : unacknowledged.ranges()) {
      const auto bytes = send.message.subspan(r.offset, r.length);
      tail.kept.emplace_back(r, std::vector<std::byte>(bytes.begin(), bytes.end()));
    }
    tail.kept_bytes = unacknowledged.bytes();
    tail.resend = ChunkFeed(0, static_cast<int>(streams.size()), kSmallestPiece, largest_piece());
    arm_probe();
  }

  // Drops the kept tail once the peer acknowledged every kept byte on some stream; copies
  // still queued then go out needlessly (the peer drops them) and are no longer watched.
  void settle_tail() {
    if (!tail.active || tail.delivered.bytes() < tail.kept_bytes) return;
    for (Stream& s : streams) {
      std::erase_if(s.written, [&](const Written& w) { return w.message_id == tail.id; });
    }
    tail = KeptTail{};
  }

  // Looks again at the streams found stalled last time (the others are not asked: a send of
  // a small message should not cost a system call per stream).
  void refresh_stuck() {
    const auto now = Clock::now();
    for (std::size_t i = 0; i < streams.size(); ++i) {
      Stream& s = streams[i];
      if (s.stuck) {
        s.stuck = stall_watch->stalled(static_cast<int>(i), probe(s), now, options.stall_patience);
      }
    }
  }

  // Every piece is out and a stream has nothing to write: the message now only waits for the
  // streams still carrying it.
  bool endgame() const {
    return send.feed.empty() && std::any_of(streams.begin(), streams.end(), [](const Stream& s) {
             return s.idle_sender() && !s.stuck;
           });
  }

  // Forgets acknowledged frames (the send is done once none is left), re-sends the share of
  // every stalled stream once every piece is out and another stream has nothing left to write
  // (a stream whose share went out again carries none of the send any more, unless it had to
  // be given some again for want of other streams), and hands pieces to streams that
  // recovered.
  // A stream that stalls holding bytes of the kept tail has them sent again at once (the peer
  // waits for that message), ahead of the posted send's pieces; the receiver reads the next
  // message ahead meanwhile, so the patience is that of the posted send.
  void look_at_streams() {
    const auto now = Clock::now();
    const bool ending = endgame();
    std::vector<Stream*> stalled, stalled_on_tail;
    bool someone_idle = false;
    bool newly_stalled = false;
    PathSample path;
    std::chrono::microseconds smoothed_round_trip{0};  // the longest, queueing included
    std::uint64_t acknowledged = 0;
    for (std::size_t i = 0; i < streams.size(); ++i) {
      Stream& s = streams[i];
      const StreamProgress progress = probe(s);
      forget_acknowledged(s, progress);
      const bool holds_tail = tail.active && holds(s, tail.id);
      const bool was_stuck = s.stuck;
      s.stuck = stall_watch->stalled(static_cast<int>(i), progress, now,
                                     ending ? options.endgame_patience : options.stall_patience);
      const bool stuck_with_send = s.stuck && carries_send(s);  // scans the written frames once
      if (s.stuck && holds_tail) stalled_on_tail.push_back(&s);
      if (stuck_with_send && !s.interrupting) stalled.push_back(&s);
      newly_stalled = newly_stalled || (stuck_with_send && !was_stuck);
      someone_idle = someone_idle || (s.idle_sender() && !s.stuck);
      acknowledged += progress.acknowledged;
      smoothed_round_trip = std::max(smoothed_round_trip, progress.round_trip);
      path.round_trip = std::max(path.round_trip, progress.least_round_trip);
      path.send_window = std::max(path.send_window, progress.send_window);
    }
    send.path = path;  // no rate yet: report_stall() and message_path() add theirs
    if (newly_stalled && governor.adapts() && send.striped && !send_done()) {
      report_stall(now, path, acknowledged, smoothed_round_trip);
    }
    for (Stream* s : stalled_on_tail) resend_tail_share(*s);
    settle_tail();
    if (send_done()) return feed_streams();
    // Only once every piece is out: before that an idle stream takes new bytes, and a stall
    // in mid-message usually ends (the kernel retransmits) before the message does.
    if (someone_idle && send.feed.empty()) {
      for (Stream* s : stalled) {
        if (s->writes_borrowed()) {
          s->interrupting = true;  // resend_share() runs when the write has stopped
          s->stop_write->emit(asio::cancellation_type::terminal);
        } else {
          resend_share(*s, {});
        }
      }
    }
    feed_streams();  // streams found stalled before may have recovered
  }

  // A stream carrying the posted striped send stalled: the governor may take streams out of
  // use. `acknowledged`: the streams' acknowledged bytes now, added up; `round_trip`: the
  // longest smoothed round trip of the streams.
  void report_stall(Clock::time_point now, PathSample path, std::uint64_t acknowledged,
                    std::chrono::microseconds round_trip) {
    send.stalled = true;
    const double seconds = std::chrono::duration<double>(now - send.started).count();
    const std::uint64_t delivered =
        acknowledged - std::min(acknowledged, send.acknowledged_at_start);
    path.delivered_rate = seconds > 0 ? static_cast<double>(delivered) / seconds : 0;
    // A decrease shows once the streams let go have finished their pieces and recovered.
    governor.stalled(now, options.stall_patience.wait(round_trip), path);
  }

  // The path as the posted send found it: its bytes over its time so far.
  PathSample message_path() const {
    PathSample path = send.path;
    const double seconds = std::chrono::duration<double>(Clock::now() - send.started).count();
    path.delivered_rate = seconds > 0 ? static_cast<double>(send.message.size()) / seconds : 0;
    return path;
  }

  // `s` holds bytes of the posted send that may not have reached the peer.
  bool carries_send(const Stream& s) const { return holds(s, send.id) || s.writes_borrowed(); }

  void write_failed(Stream& s, const asio::error_code& ec) {
    if (!failure.empty() || ec == asio::error::operation_aborted) return;
    if (is_peer_gone(ec)) {
      peer_gone = true;
      return fail(fmt::format("peer {} closed the connection while message {} was sent ({})",
                              s.name, send.id, sent_text()));
    }
    fail(fmt::format("sending message {} to {} failed: {}", send.id, s.name, ec.message()));
  }

  std::string sent_text() const {
    return fmt::format("sent {} of {} bytes",
                       std::min<std::uint64_t>(send.sent, send.message.size()),
                       send.message.size());
  }

  // --- waiting and failing ---

  void fail(std::string message) {
    if (!failure.empty()) return;
    failure = std::move(message);
    for (Stream& s : streams) {
      asio::error_code ignored;
      s.socket.close(ignored);
    }
    if (probe_timer) probe_timer->cancel();
  }

  bool idle() const {
    if (probing) return false;
    for (const Stream& s : streams) {
      if (s.reading || s.writing) return false;
    }
    return true;
  }

  // A split send that keeps its tail is done once the previous one's tail is settled (at most
  // one message's tail is kept); one that does not, once the peer acknowledged all of it.
  bool send_done() const {
    if (!failure.empty() || !send.active) return true;
    if (!send.all_handed_out()) return false;
    if (!send.keeps_until_acknowledged) return true;
    if (tail.active) return false;
    if (send.keeps_tail) return true;
    return std::none_of(streams.begin(), streams.end(),
                        [this](const Stream& s) { return holds(s, send.id); });
  }
  bool recv_done() const { return !failure.empty() || !receive.active || receive.complete; }

  // Drives the io_context until the posted operations completed, failing the set on timeout.
  void await() {
    if (!run_until(*io, Clock::now() + options.timeout,
                   [this] { return send_done() && recv_done(); })) {
      fail(timeout_text());
    }
  }

  // After a failure: lets the aborted handlers run (they still refer to the buffers), then
  // throws the failure.
  void throw_failure() {
    drain(*io, [this] { return idle(); });
    send.active = false;
    receive.active = false;
    throw TransportError(failure);
  }

  // Closes the streams and waits for every handler, so that neither the caller's buffers nor
  // this object are referred to afterwards (the context may be shared and outlive the set).
  void abandon() {
    for (Stream& s : streams) {
      asio::error_code ignored;
      s.socket.close(ignored);
    }
    if (probe_timer) probe_timer->cancel();
    drain(*io, [this] { return idle(); });
    send.active = false;
    receive.active = false;
  }

  // A peer that re-sends stalled streams' shares may still be writing copies nobody needs
  // when this end is done, and may be waiting for their acknowledgement. Closing a socket with
  // unread data resets the connection, which the peer would report as an error, so this end
  // first says it is done (shuts down its sending side) and reads and drops what comes until
  // the peer closes too, for at most a few seconds.
  void linger() {
    closing = true;
    for (Stream& s : streams) {
      asio::error_code ignored;
      s.socket.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
      if (s.parked) {
        const std::uint64_t rest = s.parked->length;
        s.parked.reset();
        discard(s, rest);
      } else if (!s.reading && !s.closed) {
        read_header(s);
      }
    }
    const auto until = Clock::now() + std::min<Clock::duration>(options.timeout, kLinger);
    run_until(*io, until, [this] {
      return !failure.empty() ||
             std::all_of(streams.begin(), streams.end(), [](const Stream& s) { return s.closed; });
    });
  }

  ~Impl() {
    if (!io) return;
    settle_before_closing();
    if (failure.empty() && peer_resends) linger();
    abandon();
  }

  void finish_send() {
    if (!failure.empty()) throw_failure();
    if (!send.active) return;
    if (send.keeps_tail) keep_tail();
    if (send.striped && governor.adapts()) governor.message_done(send.stalled, message_path());
    ++next_send_id;
    ++counters.messages;
    counters.message_bytes += send.message.size();
    send.active = false;
  }

  // Waits (bounded by the timeout) until the kept tail is acknowledged, so that closing the
  // streams loses none of it.
  void settle_before_closing() {
    if (!failure.empty() || !tail.active) return;
    if (!run_until(*io, Clock::now() + options.timeout,
                   [this] { return !failure.empty() || !tail.active; })) {
      fail(fmt::format("timed out after {} waiting for the acknowledgement of message {} to {}",
                       seconds_text(options.timeout), tail.id, peer));
    }
  }

  std::uint64_t finish_recv() {
    if (!failure.empty()) throw_failure();
    if (!receive.active) return 0;
    ++next_recv_id;
    receive.active = false;
    return receive.total.value_or(0);
  }

  std::string timeout_text() const {
    std::string what;
    if (receive.active && !receive.complete) {
      what = fmt::format("waiting for message {} from {}: {}", receive.id, peer, received_text());
    }
    if (!send_done()) {
      what += fmt::format(
          "{}sending message {} to {}: {}{}", what.empty() ? "" : "; ", send.id, peer, sent_text(),
          send.all_handed_out() ? fmt::format(", message {} not all acknowledged", tail.id) : "");
    }
    return fmt::format("timed out after {} {}", seconds_text(options.timeout), what);
  }

  void check_usable() const {
    if (!failure.empty()) {
      throw TransportError(
          fmt::format("streams to {} are closed after an error: {}", peer, failure));
    }
  }
};

StreamSet::StreamSet(std::unique_ptr<asio::io_context> io,
                     std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& options)
    : StreamSet(std::shared_ptr<asio::io_context>(std::move(io)), std::move(sockets), options) {}

StreamSet::StreamSet(std::shared_ptr<asio::io_context> io,
                     std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (sockets.empty()) throw UsageError("a stream set needs at least one connected socket");
  impl_->io = std::move(io);
  impl_->options = options;
  impl_->streams.reserve(sockets.size());  // handlers keep references to the streams
  for (auto& socket : sockets) impl_->streams.emplace_back(std::move(socket));
  impl_->peer = impl_->streams.front().name;
  impl_->governor = StreamGovernor(
      {.streams = static_cast<int>(impl_->streams.size()), .adapts = impl_->governed()});
  // Readers run from the start, so a peer's early data or close is seen at the next call.
  for (Stream& s : impl_->streams) impl_->read_header(s);
}

StreamSet::StreamSet(StreamSet&&) noexcept = default;
StreamSet& StreamSet::operator=(StreamSet&&) noexcept = default;
StreamSet::~StreamSet() = default;

void StreamSet::send(std::span<const std::byte> message, std::uint64_t sequence) {
  start_send(message, sequence);
  impl_->await();
  finish_send();
}

void StreamSet::recv(std::span<std::byte> buffer, std::uint64_t sequence) {
  start_recv(buffer, sequence);
  impl_->await();
  finish_recv();
}

std::uint64_t StreamSet::recv_up_to(std::span<std::byte> buffer, std::uint64_t sequence) {
  start_recv(buffer, sequence, ReceiveSize::UpTo);
  impl_->await();
  return finish_recv();
}

void StreamSet::send_recv(std::span<const std::byte> message, std::span<std::byte> buffer,
                          std::uint64_t sequence) {
  start_recv(buffer, sequence);
  start_send(message, sequence);
  impl_->await();
  finish_send();
  finish_recv();
}

void StreamSet::start_send(std::span<const std::byte> message, std::uint64_t sequence) {
  impl_->check_usable();
  impl_->start_send(message, sequence);
}

void StreamSet::start_recv(std::span<std::byte> buffer, std::uint64_t sequence, ReceiveSize size) {
  impl_->check_usable();
  impl_->start_receive(buffer, sequence, size);
}

bool StreamSet::send_done() const {
  return impl_->send_done();
}
bool StreamSet::recv_done() const {
  return impl_->recv_done();
}
void StreamSet::finish_send() {
  impl_->finish_send();
}
std::uint64_t StreamSet::finish_recv() {
  return impl_->finish_recv();
}

std::uint64_t StreamSet::progress() const {
  return (impl_->send.active ? impl_->send.sent : 0) +
         (impl_->receive.active ? impl_->receive.arrived.bytes() : 0);
}

void StreamSet::expire() {
  if (!impl_->send_done() || !impl_->recv_done()) impl_->fail(impl_->timeout_text());
}

void StreamSet::close() {
  impl_->settle_before_closing();
  impl_->fail(fmt::format("streams to {} were closed by this end", impl_->peer));
  impl_->abandon();
}

bool StreamSet::ended_by_peer() const {
  return impl_->ended_by_peer;
}
bool StreamSet::peer_gone() const {
  return impl_->peer_gone;
}
asio::io_context& StreamSet::context() {
  return *impl_->io;
}
std::chrono::milliseconds StreamSet::timeout() const {
  return impl_->options.timeout;
}

SendCounters StreamSet::send_counters() const {
  SendCounters counters = impl_->counters;
  counters.streams_in_use = impl_->governor.in_use();
  return counters;
}

int StreamSet::streams() const {
  return static_cast<int>(impl_->streams.size());
}
const std::string& StreamSet::peer() const {
  return impl_->peer;
}

}  // namespace multilane::runtime
