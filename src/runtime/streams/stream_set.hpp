// runtime/streams/stream_set.hpp — K authenticated TCP streams to one peer, used as one message
// channel.
//
// Several TCP streams fill a long fat pipe that one stream cannot (a stream's throughput is
// capped by window / RTT; MPWide, section 3). A StreamSet sends a message of at least
// `stripe.threshold` bytes as pieces spread over the K streams, and a smaller one whole on one
// stream, rotating the stream from message to message. The pieces are not shared out up
// front: a stream takes the next piece when it has written its last one (chunk_feed.hpp), so
// a stream that the network serves worse carries less of the message instead of holding up its
// end. Every piece carries its offset (wire.hpp), so the receiver reads each piece straight
// into the posted receive buffer, in whatever order pieces arrive across streams, and
// completes once all bytes arrived.
//
// Contract:
//   - Messages are matched in order: the k-th send() of one end fills the k-th recv() of the
//     other, whose buffer must have exactly the sent length (else TransportError).
//   - `sequence` (the collective call number) must be the same on both ends.
//   - Calls are blocking and bounded: each waits at most `timeout`, and a timeout error says
//     what was awaited ("timed out after 60 s waiting for message 3 from 127.0.0.1:4711:
//     received 100 of 1000 bytes").
//   - send() returns when the bytes are handed to the kernel, not when the peer read them; a
//     send larger than the socket buffers therefore needs the peer to be receiving. Use
//     send_recv() to exchange with a peer that sends at the same time. (With
//     `resend_stalled`, a split message's unacknowledged end is copied first; see "Stalled
//     streams".)
//   - After any TransportError the set is closed; later calls throw again.
//   - Not thread-safe: one call at a time per set (sets are independent of each other).
//   - recv_up_to() takes a message of any length up to the buffer's size and returns its
//     length (the frames carry it), for receivers that do not know what is coming.
//
// Several sets at once (the WAN channels drive many paths from one thread): sets built on one
// shared io_context can each have one send and one receive posted with start_send() /
// start_recv(); the caller drives the context (io_wait.hpp's run_until) until send_done() /
// recv_done() hold, calls expire() on a set whose deadline passed, and retires the operations
// with finish_send() / finish_recv(), which throw the set's TransportError if it failed. A
// posted operation refers to the caller's buffer until it is finished, also after a failure.
//
// Stalled streams (`resend_stalled`): a message is complete only when its slowest stream
// delivered its share, and a stream that lost a packet in a full queue waits a retransmission
// timeout (200 ms at least on Linux) while the others idle. With the option on, the sender
// watches its streams while a send is posted (stall_watch.hpp); once every piece is handed
// out and a stream has nothing left to write, each stalled stream's doubtful share -- written
// but unacknowledged bytes, the unwritten rest of its current piece -- goes back to the front
// of the feed, for the other streams (as MPTCP's opportunistic retransmission does). Not
// before: while pieces are left, a stalled stream just takes no more of them, and the kernel
// usually retransmits its bytes before the message ends (re-sending them in mid-message cost
// 10-15% of the bytes at 64 streams). In that end game a stream counts as stalled sooner
// (`endgame_patience`: the message is waiting for it, and a needless copy travels while other
// streams idle). send_counters() tells how many bytes went out twice.
// The stalled stream keeps owning what it already started: the rest of an interrupted frame is
// copied out of the caller's buffer and written later, so the caller gets its buffer back on
// time. A stream's last bytes may sit in the kernel's socket buffer when it stalls, so a split
// send keeps its bytes until TCP acknowledged every one. On a short path (`tail_round_trip`)
// it simply returns only then. On a long one it returns once every piece is handed out,
// keeping a copy of the bytes TCP has not acknowledged yet (the "tail": at most what is in
// flight and in the unsent queues), so the streams go on with the next message while those
// acknowledgements arrive (waiting for them cost a round trip and more per message). A stream
// that stalls holding bytes of the tail has them sent again from the copy, ahead of the next
// message's pieces. At most one tail is kept: the next split send completes only once the
// previous tail is acknowledged, and closing or destroying the set first waits (up to the
// timeout) for its tail. The receiver acknowledges at once when it has a whole message
// (kFrameAcknowledgeSoon). Receivers always accept a byte range twice (the first copy wins, a
// late copy of a finished message is read and dropped), so only the sender needs the option;
// the copies are the same bytes, so their order never matters. Copies of message n can come
// behind frames of message n+1 on a stream, so a receiver reads frames of the next message
// ahead into memory while the current one is incomplete (up to the current buffer's size, at
// least 4 MiB; beyond that the stream waits for the next receive, and the message for the
// stalled stream's own recovery).
// A receiver of such a sender lingers when it is destroyed (up to 3 s) until the
// peer closes too, so that unread late copies do not reset a connection the peer still uses.
// Only stalls between this end and its peer's kernel are seen: behind a relay that
// acknowledges and forwards, a stall on the far side looks like a slow stream.
//
// Streams in use (`adapt_streams`): too many streams for a short path overflow its queue so
// often that streams keep stalling; with the option on, only the first in_use() streams that
// are not stalled take pieces, a number halved on a stall and grown by one after every split
// message without one, and no more than 16 unless the path's windows need more
// (stream_governor.hpp). send_counters() tells the number. Not through a relay
// (`relayed`): each end then measures only its hop to the relay, whose round trip and stalls
// (the relay's buffers filling) say nothing of the path beyond it, so all K streams take pieces.
//
// Establishing: StreamListener::accept() accepts K connections and connect_streams() opens K,
// each authenticated by the job secret (auth.hpp) and set up with TCP_NODELAY and the buffer
// sizes of the options. Both ends must use the same number of streams.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/streams/stall_watch.hpp"
#include "runtime/streams/stream_governor.hpp"
#include "runtime/streams/stream_progress.hpp"
#include "runtime/transport/auth.hpp"
#include "runtime/transport/io_wait.hpp"
#include "runtime/transport/stripe.hpp"

namespace multilane::runtime {

struct StreamOptions {
  std::uint64_t job_id = 0;
  JobSecret secret;
  int streams = 1;                // K, the same on both ends
  StripeOptions stripe;           // when and how messages are cut
  int send_buffer = 0;            // SO_SNDBUF in bytes, 0: the system's default
  int receive_buffer = 0;         // SO_RCVBUF in bytes, 0: the system's default
  std::uint64_t pacing_rate = 0;  // SO_MAX_PACING_RATE of each stream in bytes/s, 0: unpaced
  // TCP_NOTSENT_LOWAT of each stream in bytes, 0: the system's default. A short unsent queue
  // makes a stream finish writing a piece only when it is about to send its end, so the pieces
  // of a striped message go to the streams that actually move bytes (chunk_feed.hpp); with
  // the default, the socket buffers swallow a whole message at once, in equal shares.
  int unsent_limit = 0;
  std::chrono::milliseconds timeout{60'000};           // every blocking wait
  std::uint64_t max_message = std::uint64_t{1} << 32;  // larger incoming messages are refused
  // Re-send a stalled stream's share on idle streams (see "Stalled streams" above).
  bool resend_stalled = false;
  // Cut a split message into K equal shares up front, one per stream, as MPWide does, instead
  // of handing pieces out as streams can take them; for comparison only.
  bool equal_shares = false;
  // Hand a split message's pieces to only as many streams as the path carries without stalls
  // (stream_governor.hpp); off: all K streams take pieces. Needs resend_stalled (its watch
  // sees the stalls); ignored with equal_shares and on a paced path (each stream is paced to
  // its share of the path's rate, so fewer streams would only be slower).
  bool adapt_streams = false;
  // The streams go through a relay (the caller named one, or the handshake said the peer is
  // one: AuthenticatedStream::peer_is_relay); the streams in use then do not adapt.
  bool relayed = false;
  // How long a stream may go without an acknowledgement before it counts as stalled: while
  // pieces are left to hand out (a stream that stalls then just takes no more of them), and
  // once every piece is out and some stream is idle, so that the message waits only for the
  // stalled streams (a needless copy then costs little: the path has room).
  StallPatience stall_patience{std::chrono::milliseconds(60), 4};
  StallPatience endgame_patience{std::chrono::milliseconds(10), 4};
  // A split send keeps a copy of its unacknowledged end and returns at once (see "Stalled
  // streams") only on a path whose shortest round trip is at least this long; on a shorter
  // one, waiting for the acknowledgements costs less than the copies.
  std::chrono::microseconds tail_round_trip{1000};
  StreamProgressProbe progress_probe;  // empty: tcp_progress (the kernel's figures)
};

// What a set's sends cost so far: how many payload bytes went out a second time because a
// stream stalled (the copies iperf3's "Retr" column has no counterpart for, since TCP's own
// retransmissions are not counted here).
struct SendCounters {
  std::uint64_t messages = 0;       // sends completed
  std::uint64_t message_bytes = 0;  // their sizes, added up
  std::uint64_t resent_bytes = 0;   // bytes of stalled streams handed to other streams again
  std::uint64_t stalls = 0;         // times a stalled stream's share was taken back
  int streams_in_use = 0;           // streams that take the next split message's pieces
};

// How a receive matches the incoming message's length.
enum class ReceiveSize {
  Exact,  // the message must have exactly the buffer's size
  UpTo,   // any size up to the buffer's size (dsendrecv)
};

class StreamSet {
 public:
  // Takes K connected, authenticated sockets that live on `io`.
  StreamSet(std::unique_ptr<asio::io_context> io, std::vector<asio::ip::tcp::socket> sockets,
            const StreamOptions& options);
  // The same on a context other sets share, so one thread can drive them all.
  StreamSet(std::shared_ptr<asio::io_context> io, std::vector<asio::ip::tcp::socket> sockets,
            const StreamOptions& options);
  StreamSet(StreamSet&&) noexcept;
  StreamSet& operator=(StreamSet&&) noexcept;
  ~StreamSet();

  void send(std::span<const std::byte> message, std::uint64_t sequence = 0);
  void recv(std::span<std::byte> buffer, std::uint64_t sequence = 0);
  // Both at once: for peers that send to each other at the same time.
  void send_recv(std::span<const std::byte> message, std::span<std::byte> buffer,
                 std::uint64_t sequence = 0);
  // Receives a message of at most buffer.size() bytes into the buffer's start; returns its size.
  std::uint64_t recv_up_to(std::span<std::byte> buffer, std::uint64_t sequence = 0);

  // --- non-blocking use (see the top of this file) ---
  void start_send(std::span<const std::byte> message, std::uint64_t sequence = 0);
  void start_recv(std::span<std::byte> buffer, std::uint64_t sequence = 0,
                  ReceiveSize size = ReceiveSize::Exact);
  bool send_done() const;  // the posted send completed or the set failed (true if none)
  bool recv_done() const;  // the posted receive completed or the set failed (true if none)
  void finish_send();
  std::uint64_t finish_recv();  // the received message's size
  // Bytes the posted operations moved so far (sent plus received): a caller that times out
  // only waits without progress watches it.
  std::uint64_t progress() const;
  // The posted operations' deadline passed: fails the set with a timeout error saying what
  // was awaited (finish_* then throw it).
  void expire();
  // Ends the set from this side: its streams are closed and later calls throw.
  void close();
  // True when the set failed because the peer closed every stream between two messages (an
  // orderly end, e.g. of a relayed conversation), not inside one.
  bool ended_by_peer() const;
  // True when the set failed because the peer closed or reset a stream, at any point.
  bool peer_gone() const;
  asio::io_context& context();
  std::chrono::milliseconds timeout() const;
  SendCounters send_counters() const;

  int streams() const;
  const std::string& peer() const;  // "host:port" of the first stream's remote end

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// One connection once both ends authenticated it, and what the peer said of itself.
struct AuthenticatedStream {
  asio::ip::tcp::socket socket;
  std::uint64_t identity = 0;  // the peer's, from its handshake
  bool peer_is_relay = false;  // the peer is a relay (auth.hpp): the path goes on beyond it
};

class StreamListener {
 public:
  // Listens on `endpoint` (port 0: any free port).
  StreamListener(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options);
  ~StreamListener();
  std::uint16_t port() const;
  // Accepts and authenticates `options.streams` connections from one peer.
  StreamSet accept();
  // Accepts and authenticates one connection onto `io` (for callers that assemble sets
  // themselves, e.g. grouping the streams of several peers by their identities).
  using Accepted = AuthenticatedStream;
  Accepted accept_stream(asio::io_context& io, Clock::time_point deadline);

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  StreamOptions options_;
};

// Opens and authenticates `options.streams` connections to a listener; retries refused
// connections until the timeout, so the listener may start a little later.
StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options);

// One connection as connect_streams() makes them: connected (refused attempts retried until
// `deadline`), tuned and authenticated as the connector with `identity`; on `io`.
AuthenticatedStream connect_stream(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                   Clock::time_point deadline, const StreamOptions& options,
                                   std::uint64_t identity = 0);
// TCP_NODELAY and pacing (options.pacing_rate) on a connected socket; the buffer sizes must be
// set before connecting (they fix the TCP window scale).
void tune_connected_stream(asio::ip::tcp::socket& socket, const StreamOptions& options);

}  // namespace multilane::runtime
