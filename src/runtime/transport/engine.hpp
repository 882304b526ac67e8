// runtime/transport/engine.hpp — the progress engine: every TCP stream of one rank, driven by one
// thread.
//
// The engine moves messages between ranks. A message is identified by its sender, its
// receiver and a MessageKey (the call's sequence number and the message's index on that
// ordered pair of ranks within the call); it is matched by key, not by arrival order, so chunks
// of several messages may interleave on the streams.
//
// Streams. Connections are opened on the first send to a peer on a lane, K of them per (peer,
// lane), K by the link class (LAN or WAN); the accepting side learns from the handshake
// (auth.hpp) which rank, lane and stream spoke. A connection carries both directions: a rank
// answers over the connections its peer opened to it, so that answers carry the TCP
// acknowledgements of what they answer (send_side.hpp says how two ranks that open at once
// come to share one again).
//
// Sending. A message is cut into chunks (stripe.hpp) over the streams of the lanes it names and
// each chunk is written as header + bytes; the send completes when every chunk was handed to
// the kernel. On WAN links a stream that stalls takes no more pieces, and once every piece is
// handed out its doubtful share (unacknowledged bytes, the unwritten rest of its frame) goes out
// again on the streams that move (resend_stalled); the receiver keeps the first copy of a byte.
// Receiving. Each incoming stream reads a header, then the chunk's bytes straight into the
// posted receive buffer at the chunk's offset. A chunk for a receive not posted yet is kept in
// memory, up to the unexpected-message budget; beyond it the stream pauses until the receive is
// posted (TCP then holds the sender back).
//
// Faults. Every operation fails, never hangs: a receive or send that made no progress for the
// timeout fails saying what it awaited ("timed out after 60 s waiting for rank 3: received 100
// of 1000 bytes"); a peer whose every connection closed fails every pending receive from it at
// once ("rank 3 closed its connections (it exited or died)"), or, while connections accepted
// here are still in their handshake, once those have ended (one may be another stream of that
// peer with the rest of a message: the connecting side finishes its handshake first); a connection
// that fails the handshake or sends a malformed frame is closed and logged, and the job goes on. A
// frame whose call signature differs from the receiver's for the same call fails that call
// ("mismatch").
//
// Threading: one thread at a time drives the engine (runs its event loop); every operation and
// every completion runs on the driving thread. A blocking call drives it on the caller's own
// thread (run_blocking) when nothing else is in flight, which saves the two thread wake-ups of a
// hand-off; the engine's progress thread drives while background operations (start_background:
// non-blocking calls, and blocking ones that found the engine busy) are in flight, or while a
// split WAN send's kept tail waits for its acknowledgements, and sleeps otherwise. Data that
// arrives while nobody drives waits in the kernel's socket buffers until the next operation. Other
// threads hand work to the driving thread with post(). The destructor first waits (up to the
// timeout) until a kept tail is acknowledged or has failed, then stops the thread and closes
// every socket; pending operations are dropped without their completions running.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/stall_watch.hpp"
#include "runtime/tcp/stream_progress.hpp"
#include "runtime/tcp/stripe.hpp"
#include "runtime/tcp/tcp_connect.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

enum class LinkClass : std::uint8_t { Lan, Wan };

// How connections of one link class are made.
struct LinkSettings {
  int streams = 1;  // K: connections per (peer, lane)
  SocketTuning socket;
};

struct EngineConfig {
  int rank = 0;
  int size = 1;
  std::uint64_t job_id = 0;
  JobSecret secret;
  // One local address per lane of this rank's node: listeners bind there, and connections
  // on that lane leave from there (when it is not the unspecified address).
  std::vector<std::string> lane_addresses{"127.0.0.1"};
  // Listening ports: the first free one of [low, high] per lane; both 0: the system's choice.
  std::uint16_t listen_port_low = 0;
  std::uint16_t listen_port_high = 0;
  LinkSettings lan;
  LinkSettings wan{4, {}};
  StripeOptions stripe;
  std::chrono::milliseconds timeout{60'000};
  std::uint64_t unexpected_budget = 256ull << 20;  // bytes of early chunks kept in memory
  std::uint64_t max_message = 1ull << 40;          // larger incoming messages are refused
  // In the end game of a split send over a WAN link, a stalled stream's share goes out again
  // on the other streams instead of waiting for its retransmission (docs/runtime.md).
  bool resend_stalled = true;
  // How long a WAN stream may go without an acknowledgement before it counts as stalled, and
  // in a split send's end game (the message waits for it, so sooner).
  StallPatience stall_patience{std::chrono::milliseconds(60), 4};
  StallPatience endgame_patience{std::chrono::milliseconds(10), 4};
  // CommunicatorOptions::while_waiting: run by a blocking caller between waits of
  // kWhileWaitingEvery when nothing arrives.
  std::function<void()> while_waiting;
  StreamProgressProbe progress_probe;  // empty: tcp_progress (the kernel's figures)
};

// What stalls cost the sends so far.
struct EngineSendCounters {
  std::uint64_t stalls = 0;        // shares of stalled streams sent again
  std::uint64_t resent_bytes = 0;  // their bytes, handed to other streams a second time
  // Streams that moved to the peer's connection, after both ranks opened their own at once
  // (send_side.hpp).
  std::uint64_t moved_to_peer = 0;
};

struct MessageKey {
  // The call's space and number (call_space.hpp): number 0 is point-to-point, collectives
  // count from 1.
  std::uint64_t sequence = 0;
  std::uint64_t message_id = 0;  // k-th message of this call on the ordered pair
  friend bool operator==(const MessageKey&, const MessageKey&) = default;
};

// Lanes first .. first + count - 1: one lane, or every lane two ranks share (0 .. n-1).
struct LaneRange {
  int first = 0;
  int count = 1;
  struct Iterator {
    int lane;
    int operator*() const { return lane; }
    Iterator& operator++() {
      ++lane;
      return *this;
    }
    friend bool operator==(const Iterator&, const Iterator&) = default;
  };
  Iterator begin() const { return {first}; }
  Iterator end() const { return {first + count}; }
};

struct SendRequest {
  int peer = 0;
  LaneRange lanes;  // lanes to stripe over (at least one)
  LinkClass link = LinkClass::Lan;
  MessageKey key;
  std::uint64_t signature = 0;
  std::span<const std::byte> bytes;
};

struct RecvRequest {
  int peer = 0;
  MessageKey key;
  std::uint64_t signature = 0;
  std::span<std::byte> bytes;  // must be exactly the message's length
  // Called on the driving thread as soon as bytes [offset, offset+length) of `bytes` hold the
  // message's data, chunk by chunk in arrival order, before the completion: a reduction
  // combines each chunk while it is still in the cache. Each byte is reported once, also when
  // a copy of it arrived on another stream (the ranges never overlap).
  std::function<void(std::uint64_t offset, std::uint64_t length)> landed;
};

// Called once per operation on the driving thread: nullopt on success, else the failure.
using Completion = std::function<void(const Outcome& outcome)>;
// The outcome of a success, made once: a small call completes several operations.
inline const Outcome kSucceeded;
// Starts an operation on the driving thread (send(), recv(), a schedule run); it calls the
// completion it is given exactly once.
using Operation = std::function<void(Completion)>;

class Engine {
 public:
  explicit Engine(EngineConfig config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const EngineConfig& config() const;
  // "host:port" this rank listens on, one per lane, to publish at the rendezvous.
  std::vector<std::string> listening_addresses() const;
  // Where `peer` listens, one "host:port" per lane. Thread-safe; needed before sending to it.
  void set_peer_addresses(int peer, std::vector<std::string> addresses);

  // Runs `work` on the driving thread. Only for work that belongs to an operation in flight
  // (a thread of the shared-memory group reporting back): otherwise nobody may be driving.
  void post(std::function<void()> work);
  // Starts `operation` in the background: the progress thread drives until it completed.
  void start_background(Operation operation, Completion done);
  // Runs `operation` on this thread, driving the engine until it completes, and returns true
  // with its outcome in `outcome`; false, without running it, when another thread drives or
  // background operations are in flight (then start it in the background instead).
  // It sleeps waiting for the network only after kPollBeforeSleeping without an event.
  // `start` is any callable that an Operation could hold; it is called, not kept, so a
  // blocking call costs no Operation of its own.
  template <typename Start>
  bool run_blocking(Start&& start, Outcome& outcome) {
    std::unique_lock<std::mutex> drive = try_to_drive();
    if (!drive.owns_lock()) return false;
    const BlockingDrive blocking(*this);
    BlockingOutcome blocking_outcome;
    start(Completion([&blocking_outcome](const Outcome& finished) {
      blocking_outcome.finished = true;
      blocking_outcome.outcome = finished;
    }));
    outcome = drive_until_finished(blocking_outcome);
    return true;
  }
  static constexpr std::chrono::microseconds kPollBeforeSleeping{100};
  static constexpr std::chrono::milliseconds kWhileWaitingEvery{1};

  // Driving thread only.
  void send(SendRequest request, Completion done);
  void recv(RecvRequest request, Completion done);
  // A call with this sequence number runs here: frames of it carrying another signature fail
  // it through `on_mismatch`. Frames that arrived before the call began are checked at once:
  // the mismatch is returned (else nullopt), and the caller must fail the call before it starts
  // any operation, since a receive would take such a frame's bytes at once. `owner` is held until
  // end_call() (or the engine's end): the call's own state, which its operations' completions
  // and `on_mismatch` may point to without owning it.
  Outcome begin_call(std::uint64_t sequence, std::uint64_t signature,
                     std::function<void(const Outcome&)> on_mismatch,
                     std::shared_ptr<void> owner = nullptr);
  void end_call(std::uint64_t sequence);
  // Call `sequence` begins later than calls numbered after it may end (a call that first
  // exchanges what it needs on this engine, communicator.cpp): until begin_call() or
  // end_call(), its frames are kept as early ones, not refused as those of an ended call.
  // Driving thread only.
  void reserve_call(std::uint64_t sequence);
  // Call `sequence` ran to its end on a caller's thread without the engine (local_call.hpp),
  // after every earlier call had ended: frames of it that come later are refused as for
  // calls that ended here. Thread-safe, and does not wake the progress thread.
  void note_local_call(std::uint64_t sequence);
  // Driving thread only: the driver is a blocking call (run_blocking), no background
  // operation is in flight and the engine is not shared, so the driver may block in that call's
  // own work (its group ops) without holding up anybody else's.
  bool blocking_call_drives_alone() const;
  // Several communicators send through this engine, each in its call space (call_space.hpp),
  // and may call on several threads at once: another one's call may start at any moment and
  // need the driver, so no driver blocks. Thread-safe.
  void set_shared(bool shared);
  // Thread-safe.
  EngineSendCounters send_counters() const;

  struct State;

 private:
  struct BlockingOutcome {
    bool finished = false;
    Outcome outcome;
  };
  // Marks the driver as a blocking call while it lives.
  class BlockingDrive {
   public:
    explicit BlockingDrive(Engine& engine) : engine_(engine) { engine_.set_blocking_drive(true); }
    ~BlockingDrive() { engine_.set_blocking_drive(false); }
    BlockingDrive(const BlockingDrive&) = delete;
    BlockingDrive& operator=(const BlockingDrive&) = delete;

   private:
    Engine& engine_;
  };
  void set_blocking_drive(bool on);
  // Holds the right to drive; not owned when another thread drives or background operations
  // are in flight.
  std::unique_lock<std::mutex> try_to_drive();
  Outcome drive_until_finished(BlockingOutcome& outcome);

  std::unique_ptr<State> state_;
};

}  // namespace multilane::runtime
