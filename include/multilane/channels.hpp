// multilane/channels.hpp — MPWide-style message passing between sites: paths of N TCP streams.
//
// A `Channels` object is one process's end of a set of paths. A path joins this process to one
// other process with N parallel TCP streams (a long fat WAN link needs several: one stream is
// capped by window / RTT). A message of at least `stripe_threshold` bytes is split over the
// path's streams in chunks of at most `chunk_size`, each stream taking the next chunk when it
// has sent its last, so streams the network serves better carry more; every chunk carries its
// offset, so the receiver writes it straight into the posted buffer whatever the arrival order
// (merged in place, no copy). Shorter messages travel whole on one stream, rotating.
//
// Contract:
//   - Every stream is authenticated with the job secret (HMAC handshake, both directions)
//     before any data moves; a peer without the secret, of another job, or with another stream
//     count is refused with a ChannelError naming it. Nothing unauthenticated is accepted.
//   - Messages on a path are matched in order: the k-th message sent by one end fills the k-th
//     receive of the other. recv() needs the exact size; dsendrecv()/dcycle() accept any size
//     up to the buffer's and return it.
//   - Calls block until done and are bounded: a path that makes no progress for its `timeout`
//     fails the call with a ChannelError saying what was awaited. The calls that involve
//     several paths (cycle, the p-variants, relay) drive them all at once from the calling
//     thread: no thread is created per call. A failure on one path does not close the others;
//     the call still finishes (or times out) their operations, then throws the first error.
//   - A path that failed stays failed (later calls on it throw); others are unaffected.
//   - Not thread-safe: one call at a time per Channels object.
//
// Establishing: add_path() records a path (and binds its port when this end listens, so a
// port 0 can be read back with local_port() and handed to the peer); establish() then
// connects and accepts every added path at once, so ends that list their paths in different
// orders cannot deadlock. A path may go through a `multilane relay` (PathSpec::relay).
//
// Example (one end; the other lists the same paths with host "" to listen):
//   multilane::channels::Channels ch(multilane::channels::Credentials::from_environment());
//   auto wan = ch.add_path({.host = "198.18.1.2", .port = 6000, .options = {.streams = 16}});
//   ch.establish();
//   ch.sendrecv(wan, std::as_bytes(std::span(out)), std::as_writable_bytes(std::span(in)));
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "multilane/errors.hpp"

namespace multilane::channels {

// Any failure of a path: connecting, authenticating, a peer that vanished or sent something
// else than expected, a timeout. The message names the peer and what was going on; kind()
// (errors.hpp) says which.
class ChannelError : public CommunicationError {
 public:
  using CommunicationError::CommunicationError;
};

// The shortest secret accepted (the same rule as the runtime's MULTILANE_SECRET).
inline constexpr std::size_t kMinSecretLength = 16;

struct Credentials {
  std::uint64_t job_id = 0;
  std::string secret;  // the job's secret text, the same at every end
  // MULTILANE_SECRET (required) and MULTILANE_JOB_ID (decimal, default 0) of the environment;
  // throws multilane::UsageError naming the variable when one is missing or malformed.
  static Credentials from_environment();
};

struct PathOptions {
  int streams = 1;                            // parallel TCP streams, 1..1024
  int send_buffer = 0;                        // SO_SNDBUF of each stream in bytes, 0: default
  int receive_buffer = 0;                     // SO_RCVBUF of each stream in bytes, 0: default
  std::uint64_t pacing_rate = 0;              // bytes/s per stream (SO_MAX_PACING_RATE), 0: none
  std::uint64_t chunk_size = 1 << 20;         // largest chunk of a split message, >= 1
  std::uint64_t stripe_threshold = 32 << 10;  // shorter messages are not split
  std::chrono::milliseconds timeout{60'000};  // longest wait without progress
  std::uint64_t max_message = std::uint64_t{1} << 32;  // larger incoming messages are refused
  // A split message is complete only when its slowest stream delivered its share. With this
  // on, a stream whose acknowledgements stop (a retransmission timeout after a drop in a full
  // queue) when the rest of the message is out and another stream is idle has its
  // undelivered share sent again on the idle streams. A split send returns once the peer
  // acknowledged every byte; on a path with a round trip of 1 ms or more it returns as soon as
  // every chunk is written, keeping a copy of what the peer has not acknowledged yet (sent
  // again if the stream holding it stalls), so consecutive messages follow each other without
  // a gap; closing the path first waits for those acknowledgements. Only the sending end
  // needs it; counters() tells how many bytes went out twice.
  bool resend_stalled = true;
  // Split a message into one equal share per stream up front, as MPWide does, instead of
  // letting each stream take the next chunk when it has sent its last; for comparison only.
  bool equal_shares = false;
  // Hand a split message's chunks to only as many of the streams as the path carries without
  // stalls: halved when a stream stalls (never below what the delivered rate needs, given the
  // streams' windows and round trip), one more after every message without a stall. Many
  // streams on a short round trip overflow the bottleneck's queue so often that streams sit
  // in retransmission timeouts, which a message waits for and iperf3 -P does not. Needs
  // resend_stalled; ignored with equal_shares and with a pacing_rate (each stream is paced to
  // its share of the path, so fewer would only be slower); counters() tells how many streams
  // are in use.
  bool adapt_streams = true;
};

struct PathSpec {
  // The peer's address (numeric or a name) to connect to; "", "0", "0.0.0.0" or "::" make this
  // end listen on `port` (all addresses) for the peer instead.
  std::string host;
  std::uint16_t port = 0;  // the peer's port, or ours when listening (0: any free port)
  // "host:port" of a `multilane relay` that forwards this path to host:port (connecting only).
  std::string relay;
  // The local address to listen on (listening only); "" means every IPv4 address.
  std::string bind_address;
  PathOptions options;
};

using PathId = int;

// One part of a p-variant call: a buffer per path.
struct Outgoing {
  PathId path = 0;
  std::span<const std::byte> data;
};
struct Incoming {
  PathId path = 0;
  std::span<std::byte> buffer;
  bool up_to = false;          // accept any size up to buffer.size() (else exactly that size)
  std::uint64_t received = 0;  // set by the call: the message's size
};

// What a path's sends cost so far (this end only).
struct PathCounters {
  std::uint64_t messages_sent = 0;
  std::uint64_t bytes_sent = 0;    // the messages' sizes, added up
  std::uint64_t bytes_resent = 0;  // copies of stalled streams' bytes sent on other streams
  std::uint64_t stalls = 0;        // stalled streams whose share was sent again
  int streams_in_use = 0;          // streams that take the next split message's chunks
};

struct RelayCounters {
  std::uint64_t messages = 0;  // forwarded, both directions
  std::uint64_t bytes = 0;
};

class Channels {
 public:
  explicit Channels(Credentials credentials);
  ~Channels();
  Channels(Channels&&) noexcept;
  Channels& operator=(Channels&&) noexcept;

  // --- paths ---
  PathId add_path(const PathSpec& spec);        // binds now when listening
  void establish();                             // every added path not yet up, all at once
  PathId open(const PathSpec& spec);            // add_path + establish
  void close(PathId path);                      // closes its streams; the peer sees the end
  std::uint16_t local_port(PathId path) const;  // the listening port (0 when connecting)
  int streams(PathId path) const;
  std::string peer(PathId path) const;       // "host:port" once established
  int size() const;                          // paths added so far
  PathCounters counters(PathId path) const;  // zero until established

  // --- message passing (see the contract above) ---
  void send(PathId path, std::span<const std::byte> data);
  void recv(PathId path, std::span<std::byte> buffer);
  void sendrecv(PathId path, std::span<const std::byte> data, std::span<std::byte> buffer);
  // Sends on one path while receiving from another (a ring step).
  void cycle(PathId to, std::span<const std::byte> data, PathId from, std::span<std::byte> buffer);
  std::uint64_t dcycle(PathId to, std::span<const std::byte> data, PathId from,
                       std::span<std::byte> limit);
  // Exchanges with a peer whose message size is unknown here (at most limit.size()); returns it.
  std::uint64_t dsendrecv(PathId path, std::span<const std::byte> data, std::span<std::byte> limit);
  // Returns once the other end of `path` called barrier() too.
  void barrier(PathId path);
  // Scatter/gather: one buffer per path, all moving at once. A path appears at most once per
  // direction.
  void psend(std::span<const Outgoing> parts);
  void precv(std::span<Incoming> parts);
  void psendrecv(std::span<const Outgoing> out, std::span<Incoming> in);
  // Forwards every message arriving on a path of a pair to the other path of the pair, in both
  // directions and for all pairs at once, until the peer of some path ends its side; then
  // closes the pairs' paths and returns what was forwarded. Messages up to `max_message`.
  RelayCounters relay(std::span<const std::pair<PathId, PathId>> pairs,
                      std::uint64_t max_message = 64 << 20);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace multilane::channels
