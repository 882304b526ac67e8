// runtime/transport/receive_side.hpp — incoming streams and the matching of chunks to receives
// (internal to the engine; see engine.hpp for the behaviour).
//
// A sender may send bytes of a split message twice (a stalled stream's share again on other
// streams, send_side.hpp), so a receive counts the bytes that landed as merged ranges: a copy
// neither completes a message early nor reaches `landed` twice (a reduction combines each byte
// once). Once every byte is in, the receive completes at once: streams still reading copies into
// its buffer drop the rest, and early copies still being read are forgotten. The keys of
// completed split messages are remembered for a while (twice the timeout, and the last 65536 at
// most), so a late copy is read and dropped by its key, even after its call ended, instead of
// waiting as early data.
#pragma once

#include <array>
#include <atomic>

#include <asio.hpp>
#include <deque>
#include <list>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"
#include "runtime/tcp/early_budget.hpp"
#include "runtime/tcp/polled_readers.hpp"
#include "runtime/tcp/wire.hpp"
#include "runtime/transport/connection.hpp"
#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/reused_nodes.hpp"

namespace multilane::runtime {

class IncomingStream;

class ReceiveSide {
 public:
  explicit ReceiveSide(EngineContext& context);
  ~ReceiveSide();
  // A message sent whole (one chunk) above this size that arrives before its receive waits in
  // the socket for it instead of an early buffer: on loopback an 8-rank alltoall of 1 MiB blocks
  // takes 16.5-17.6 ms this way against 18.0-19.7 ms (a fresh buffer, its page faults and a copy
  // per early block). Open MPI's TCP transport sends such messages once the receive is posted.
  static constexpr std::uint64_t kEarlyWholeMessageMost = 64 * 1024;

  // An accepted connection is in its handshake (peer not known yet), and its handshake ended:
  // adopted or rejected. A peer whose last stream closed is not taken for gone while
  // handshakes are under way: one of them may be another stream of that peer, already carrying
  // the rest of a message (the peer finished its side of the handshake first and may even have
  // closed since).
  // handshake_started() is thread-safe: the listening thread calls it as it accepts.
  void handshake_started() { handshaking_.fetch_add(1); }
  void handshake_ended();
  // A connection to read `peer`'s frames from: one the peer opened (it passed the handshake), or
  // one this rank opened, which the peer may send back over.
  void adopt(std::shared_ptr<Connection> connection, int peer, int lane, int stream,
             bool opened_by_peer);
  // The connections `peer` opened on `lane`, streams 0..count-1, for sending back over them;
  // empty unless all `count` are open.
  std::vector<std::shared_ptr<Connection>> peer_connections(int peer, int lane, int count) const;
  // The open connection `peer` opened as stream `stream` on `lane`, if any.
  std::shared_ptr<Connection> peer_connection(int peer, int lane, int stream) const;
  // The sending side gave `connection` up: its reader here closes with `reason`.
  void close_connection(const Connection& connection, const Failure& reason);
  void recv(RecvRequest request, Completion done);
  // Fails every receive that made no progress for the timeout.
  void check_timeouts(Clock::time_point now);
  // Fails every pending receive of a call (its other operations failed); closes the streams
  // that were writing into their buffers, so no byte lands there afterwards.
  void abandon_call(std::uint64_t sequence);
  struct Key {
    int peer;
    std::uint64_t sequence;
    std::uint64_t message_id;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  // Bytes of a chunk that arrived before its receive was posted.
  struct EarlyChunk {
    // Room for a small chunk in the record itself: one allocation per small early message.
    static constexpr std::size_t kInlineBytes = 1024;
    explicit EarlyChunk(std::uint64_t chunk_offset, std::size_t length);
    // Holds a small chunk again (length <= kInlineBytes), for a record nobody else holds.
    void reuse(std::uint64_t chunk_offset, std::size_t length);
    std::uint64_t offset = 0;
    // Neither is zero-filled: every byte is read from the socket before it is used.
    std::unique_ptr<std::byte[]> storage;  // a larger chunk's
    std::array<std::byte, kInlineBytes> inline_bytes;
    std::span<std::byte> bytes;
    bool arrived = false;  // false while the stream is still reading it
  };

  // Called by IncomingStream (driving thread).
  struct Target {
    std::span<std::byte> bytes;  // where the chunk's payload goes; empty span with park=true: wait
    bool park = false;
    bool drop = false;  // a late copy of a completed message: read and dropped
    Outcome error;      // the chunk cannot be accepted: close the stream
    static Target into(std::span<std::byte> bytes) { return {bytes, false, false, {}}; }
    static Target parked() { return {{}, true, false, {}}; }
    static Target dropped() { return {{}, false, true, {}}; }
    static Target refused(Failure error) { return {{}, false, false, std::move(error)}; }
  };
  Target place_chunk(IncomingStream& stream, const FrameHeader& header,
                     std::shared_ptr<EarlyChunk>& early);
  // The payload read for place_chunk() finished (`early` is the chunk's early buffer, if any).
  void chunk_done(const Key& key, const FrameHeader& header, IncomingStream& stream,
                  std::shared_ptr<EarlyChunk> early);
  void stream_closed(IncomingStream& stream, const Failure& reason);
  // A split message of this key completed here lately: its late copies are dropped.
  bool completed_lately(const Key& key) const { return completed_.contains(key); }

 private:
  struct Posted {
    RecvRequest request;
    Completion done;
    ByteRanges arrived;  // bytes of the message that landed, each counted once
    bool any_chunk = false;
    bool split = false;  // a chunk came marked striped: copies of its bytes may come late
    std::vector<IncomingStream*> readers;  // streams reading a chunk into the buffer now
    Clock::time_point last_progress;
    void reset();  // for the next receive, keeping the storage of `arrived` and `readers`
  };
  struct Early {
    std::uint64_t total = 0;
    std::uint64_t signature = 0;
    bool split = false;  // a chunk came marked striped
    std::vector<std::shared_ptr<EarlyChunk>> chunks;
    void reset();
  };
  // Bytes [offset, offset + length) landed in the receive's buffer: the parts not there before
  // go to its `landed` callback.
  void land(Posted& posted, std::uint64_t offset, std::uint64_t length);
  // Completes the receive if every byte of it landed.
  void complete_if_whole(const Key& key);
  void forget_pending_early(const Key& key);
  void remember_completed(const Key& key);
  void forget_old_completed(Clock::time_point now);
  void complete(const Key& key, const Outcome& outcome);
  void fail_posted(const Key& key, const Failure& failure);
  void resume_parked(const Key& key);
  // `peer` has no open stream left: it is gone, unless handshakes may still bring one.
  void last_stream_closed(int peer, const Failure& reason);
  void peer_gone(int peer, const Failure& reason);
  Failure timed_out(const Key& key, const Posted& posted) const;
  std::shared_ptr<EarlyChunk> new_early_chunk(const FrameHeader& header);

  EngineContext& context_;
  std::list<std::shared_ptr<IncomingStream>> streams_;
  std::vector<int> open_streams_;    // per peer
  std::vector<int> ever_connected_;  // per peer
  std::vector<Outcome> gone_;        // per peer: why it is gone, nullopt while alive
  // Per peer: why its last stream closed while handshakes were under way (if it did).
  std::vector<Outcome> closed_while_handshaking_;
  std::atomic<int> handshaking_{0};  // accepted connections still in their handshake
  std::unordered_map<Key, Posted, KeyHash> posted_;
  ReusedNodes<decltype(posted_)> posted_nodes_;  // of completed receives
  std::unordered_map<Key, Early, KeyHash> early_;
  ReusedNodes<decltype(early_)> early_nodes_;
  std::unordered_map<Key, std::vector<IncomingStream*>, KeyHash> parked_;
  EarlyBudget early_bytes_;  // the early chunks' bytes (config.unexpected_budget)
  // Records of small early chunks, reused once only this list holds them: a rank behind its
  // peers gets most small messages early.
  std::vector<std::shared_ptr<EarlyChunk>> small_chunks_;
  static constexpr std::size_t kReusedSmallChunks = 8;
  std::unordered_set<Key, KeyHash> completed_;  // split messages completed lately
  std::deque<std::pair<Clock::time_point, Key>> completed_order_;  // ... oldest first
  std::vector<std::byte> scratch_;  // the streams' dropped payload (FrameReader)
};

}  // namespace multilane::runtime
