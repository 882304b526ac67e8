// runtime/streams/stream_set.hpp — K authenticated TCP streams to one peer, used as one message
// channel: the WAN stream core under the channels, relay, routers and `multilane cp`. Its
// design (pieces pulled by the streams, stall recovery, the kept tail, the stream governor) is
// in docs/runtime.md, "The WAN stream core".
//
// A message of at least `stripe.threshold` bytes goes as pieces over the K streams, each
// stream taking the next piece when it has written its last one (chunk_feed.hpp); a smaller
// one goes whole on one stream, rotating from message to message. The receiver reads every
// piece straight into the posted buffer, in whatever order pieces arrive.
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
//     `resend_stalled`, a split message's unacknowledged end is copied first; see
//     docs/runtime.md.)
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
// Stalled streams and streams in use: with `resend_stalled`, a stream that stalls has its
// doubtful share sent again on the other streams once every piece is out, and a split send on
// a long path returns before its last bytes are acknowledged, keeping a copy of them; with
// `adapt_streams`, only as many streams take pieces as the path carries without stalls.
// Receivers accept every byte range twice, so only the sender needs these options.
//
// Establishing: StreamListener::accept() accepts K connections and connect_streams() opens K,
// each authenticated by the job secret (auth.hpp) and set up with TCP_NODELAY and the buffer
// sizes of the options. Both ends must use the same number of streams.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/authenticated_acceptor.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/stall_watch.hpp"
#include "runtime/tcp/stream_governor.hpp"
#include "runtime/tcp/stream_progress.hpp"
#include "runtime/tcp/stripe.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "runtime/tcp/worker_threads.hpp"

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
  // Re-send a stalled stream's share on idle streams (docs/runtime.md, "Stalled streams").
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
  // A split send keeps a copy of its unacknowledged end and returns at once (docs/runtime.md,
  // "The kept tail") only on a path whose shortest round trip is at least this long; on a shorter
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
  using Accepted = AuthenticatedStream;
  // Accepts connections until `streams` holds `count` that passed the handshake, each
  // authenticated on a thread of its own so that their round trips overlap (K streams across
  // a WAN take the setup time of one), and moved onto `io` in the order they passed. Each one
  // that passes goes to `passed` first, and each that fails its handshake to `refused` (and
  // another one is awaited); both run on the calling thread and may throw to give up. Throws
  // TransportError("timed out after ... waiting for connection") at `deadline`; `streams`
  // then holds those that passed. For callers that assemble sets themselves, e.g. grouping the
  // streams of several peers by their identities.
  //
  // Connections are accepted only inside a call, by the one accept loop
  // (authenticated_acceptor.hpp), and up to kSpareHandshakes more handshakes than streams are
  // still needed run at once (the next connections wait in the kernel's backlog), so a
  // connection that never speaks (a port scanner) does not keep the call's peer out until the
  // deadline. A handshake still under way when the call has its streams goes on in the
  // background: a stream that passes then waits for the next call, which takes it first (the
  // next peer's streams, accepted early); a failure of it is dropped with its call. An accept
  // that fails (out of descriptors) is tried again, and the timeout's message names it.
  struct AcceptWatch {
    std::function<void(const Accepted&)> passed = [](const Accepted&) {};
    std::function<void(const TransportError&)> refused = [](const TransportError& e) { throw e; };
  };
  void accept_streams(asio::io_context& io, int count, Clock::time_point deadline,
                      const AcceptWatch& watch, std::vector<Accepted>& streams);
  static constexpr std::size_t kSpareHandshakes = 4;

 private:
  struct Handshake;  // one accepted connection's, on a worker of the pool
  // The handshake steps of a connection the accept loop took, for the running call.
  AcceptedHandshake handshake_steps();
  // Takes the handshakes that ended (see accept_streams()); `call` is the running call's.
  void collect(std::uint64_t call, asio::io_context& io, int count, const AcceptWatch& watch,
               std::vector<Accepted>& streams);
  std::size_t handshakes_under_way();
  // Ends the handshakes under way at once and joins every thread.
  void stop_handshakes();
  // The call's error when it waited `waited` (its own bound, not the options' timeout: a caller
  // may give a deadline that its earlier steps have used part of).
  TransportError timed_out(Clock::duration waited) const;

  asio::io_context io_;  // run only inside accept_streams()
  StreamOptions options_;
  std::mutex handshakes_mutex_;  // guards the outcome fields of `handshakes_`
  std::list<Handshake> handshakes_;
  std::uint64_t calls_ = 0;         // accept_streams() calls so far
  std::size_t most_under_way_ = 0;  // handshakes the running call lets run at once
  Clock::time_point deadline_;      // the running call's
  std::string accept_failed_;       // why the last accept failed, if one did
  std::deque<Accepted> spare_;      // passed after their call had its streams; on `io_`
  WorkerThreads workers_;           // the handshakes' (joined before the rest goes)
  std::unique_ptr<AuthenticatedAcceptor> acceptor_;  // first to go: it refers to the rest
};

// Opens and authenticates `options.streams` connections to a listener; retries refused
// connections until the timeout, so the listener may start a little later.
StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options);

// One connection as connect_streams() makes them: connected (refused attempts retried until
// `deadline`), tuned and authenticated as the connector with `identity`; on `io`.
AuthenticatedStream connect_stream(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                   Clock::time_point deadline, const StreamOptions& options,
                                   std::uint64_t identity = 0);
// Runs connect(index, an io_context of its own) for every index in [0, count) at once, on up
// to kHandshakeThreads threads, and moves the streams onto `io` in index order: their
// handshakes' round trips overlap. Throws the failure of the lowest index once every call
// has returned.
inline constexpr int kHandshakeThreads = 64;
std::vector<AuthenticatedStream> connect_at_once(
    asio::io_context& io, int count,
    const std::function<AuthenticatedStream(int index, asio::io_context& own)>& connect);
// The same connection (file descriptor) on another io_context; no operation may be pending.
asio::ip::tcp::socket rehome(asio::ip::tcp::socket socket, asio::io_context& io);
// TCP_NODELAY and pacing (options.pacing_rate) on a connected socket; the buffer sizes must be
// set before connecting (they fix the TCP window scale).
void tune_connected_stream(asio::ip::tcp::socket& socket, const StreamOptions& options);

}  // namespace multilane::runtime
