// runtime/stream_set.hpp — K authenticated TCP streams to one peer, used as one message channel.
//
// Several TCP streams fill a long fat pipe that one stream cannot (a stream's throughput is
// capped by window / RTT; MPWide, section 3). A StreamSet sends a message of at least
// `stripe.threshold` bytes as chunks spread over all K streams (plan in stripe.hpp), and a
// smaller one whole on one stream, rotating the stream from message to message. Every chunk
// carries its offset (wire.hpp), so the receiver reads each chunk straight into the posted
// receive buffer, in whatever order chunks arrive across streams, and completes once all
// bytes arrived.
//
// Contract:
//   - Messages are matched in order: the k-th send() of one end fills the k-th recv() of the
//     other, whose buffer must have exactly the sent length (else TransportError).
//   - `sequence` (the collective call number) must be the same on both ends.
//   - Calls are blocking and bounded: each waits at most `timeout`, and a timeout error says
//     what was awaited ("timed out after 60 s waiting for message 3 from 127.0.0.1:4711:
//     received 100 of 1000 bytes").
//   - send() returns when the bytes are handed to the kernel, not when they arrived; a send
//     larger than the socket buffers therefore needs the peer to be receiving. Use
//     send_recv() to exchange with a peer that sends at the same time.
//   - After any TransportError the set is closed; later calls throw again.
//   - Not thread-safe: one call at a time per set (sets are independent of each other).
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

#include "runtime/auth.hpp"
#include "runtime/stripe.hpp"

namespace multilane::runtime {

struct StreamOptions {
  std::uint64_t job_id = 0;
  JobSecret secret;
  int streams = 1;                            // K, the same on both ends
  StripeOptions stripe;                       // when and how messages are cut
  int send_buffer = 0;                        // SO_SNDBUF in bytes, 0: the system's default
  int receive_buffer = 0;                     // SO_RCVBUF in bytes, 0: the system's default
  std::chrono::milliseconds timeout{60'000};  // every blocking wait
  std::uint64_t max_message = std::uint64_t{1} << 32;  // larger incoming messages are refused
};

class StreamSet {
 public:
  // Takes K connected, authenticated sockets that live on `io`.
  StreamSet(std::unique_ptr<asio::io_context> io, std::vector<asio::ip::tcp::socket> sockets,
            const StreamOptions& options);
  StreamSet(StreamSet&&) noexcept;
  StreamSet& operator=(StreamSet&&) noexcept;
  ~StreamSet();

  void send(std::span<const std::byte> message, std::uint64_t sequence = 0);
  void recv(std::span<std::byte> buffer, std::uint64_t sequence = 0);
  // Both at once: for peers that send to each other at the same time.
  void send_recv(std::span<const std::byte> message, std::span<std::byte> buffer,
                 std::uint64_t sequence = 0);

  int streams() const;
  const std::string& peer() const;  // "host:port" of the first stream's remote end

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class StreamListener {
 public:
  // Listens on `endpoint` (port 0: any free port).
  StreamListener(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options);
  ~StreamListener();
  std::uint16_t port() const;
  // Accepts and authenticates `options.streams` connections from one peer.
  StreamSet accept();

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  StreamOptions options_;
};

// Opens and authenticates `options.streams` connections to a listener; retries refused
// connections until the timeout, so the listener may start a little later.
StreamSet connect_streams(const asio::ip::tcp::endpoint& endpoint, const StreamOptions& options);

}  // namespace multilane::runtime
