// runtime/transport/send_side.hpp — outgoing connections and the cutting of messages over them
// (internal to the engine; see engine.hpp for the behaviour).
//
// Connections: on its first message to a (peer, lane) link, the side sends over the K
// connections the peer opened to it on that lane, if the peer sent first, and otherwise opens
// K of its own, which the peer then sends back over. So answers carry the TCP acknowledgements
// of the messages they answer, instead of each message costing an acknowledgement packet of its
// own. Two ranks that start at once
// each open their own; on a LAN link the higher rank then moves each stream to the lower
// rank's connection once the stream has nothing in flight, so that the two directions share
// one again. A connection is one socket (connection.hpp) that the ReceiveSide reads and this
// side writes.
//
// A message below the stripe threshold goes whole on one stream of the lanes it names (rotating
// by message id). A larger one is split: each of its streams takes the next piece when it has
// written its last one (chunk_feed.hpp), so a fast stream or lane carries more of it. On a WAN
// link a watch reads the streams' acknowledgements while a split send is in flight: a stalled
// stream takes no more pieces until it moves again (stall_watch.hpp), and only as many streams
// as the path carries without stalls take pieces at all (stream_governor.hpp). In the end game
// of a split send (every piece handed out, a stream that moves has nothing left to write), a
// stalled stream's doubtful share of it goes out again on the other streams, marked
// kFrameResent (EngineConfig::resend_stalled; send_side_stalls.cpp). Once its last frame is in
// the kernel, such a send completes keeping a copy of what TCP has not acknowledged yet (the
// kept tail), whose share goes again the same way if a stream stalls before the peer has it.
// The streams keep the system's unsent queue (SocketTuning::unsent_limit 0): a short one, as the
// WAN channels keep, made the two-tree broadcast on the emulated grid 9% slower (more wake-ups for
// ranks that share their cores) and gained nothing on one path (docs/performance.md).
#pragma once

#include <asio.hpp>
#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"
#include "runtime/tcp/chunk_feed.hpp"
#include "runtime/tcp/frame_outbox.hpp"
#include "runtime/tcp/kept_bytes.hpp"
#include "runtime/tcp/stall_watch.hpp"
#include "runtime/tcp/stream_governor.hpp"
#include "runtime/tcp/wire.hpp"
#include "runtime/transport/connection.hpp"
#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/receive_side.hpp"

namespace multilane::runtime {

class SendSide {
 public:
  // `receive`: the engine's incoming streams, which read the connections this side opens and
  // lend it the ones the peer opened.
  SendSide(EngineContext& context, ReceiveSide& receive);
  ~SendSide();

  void set_peer_addresses(int peer, std::vector<std::string> addresses);  // thread-safe
  void send(SendRequest request, Completion done);
  void check_timeouts(Clock::time_point now);
  void abandon_call(std::uint64_t sequence);
  // The peer opened `connection` as stream `stream` of its link to this rank on `lane` (the
  // ReceiveSide reads it already).
  void peer_opened_connection(int peer, int lane, int stream,
                              const std::shared_ptr<Connection>& connection);
  EngineSendCounters counters() const;  // thread-safe

 private:
  struct Op;
  // A stream's frames, each naming the send it belongs to (none for an interrupted frame's rest);
  // the frames of split sends that may not be acknowledged yet are recorded there too.
  using Outbox = FrameOutbox<std::shared_ptr<Op>>;
  using Frame = Outbox::Frame;
  struct Link;
  struct Stream {
    Link* link = nullptr;
    int index = 0;  // within its link
    // Declared before the connection, and the connection is closed in ~SendSide, so the outbox
    // outlives the write under way.
    Outbox out;
    std::shared_ptr<Connection> connection;  // set once connected; a reader shares it
    // The lower rank's connection of this stream, to write on once nothing is in flight.
    std::shared_ptr<Connection> lower_ranks;
    asio::ip::tcp::socket& socket() const { return connection->socket; }
    bool closed = false;
    bool stalled = false;  // stalled at the last look of the link's watch

    bool idle() const { return out.idle() && connection && !closed; }
    // Writing a frame that borrows `op`'s message.
    bool writes(const Op& op) const {
      return out.writes_borrowed() && out.front().message.get() == &op;
    }
  };
  struct Link {
    Link(int peer, int lane, LinkClass link_class, int streams)
        : peer(peer),
          lane(lane),
          link(link_class),
          governor({.streams = streams, .adapts = link_class == LinkClass::Wan}),
          watch(streams) {}
    int peer = 0;
    int lane = 0;
    LinkClass link = LinkClass::Lan;
    std::vector<std::unique_ptr<Stream>> streams;
    bool connecting = false;
    Outcome failure;  // why the link is unusable, nullopt while fine
    // How many of the streams take pieces of split messages (WAN links adapt it to stalls).
    StreamGovernor governor;
    StallWatch watch;
    int split_sends = 0;             // split sends in flight over it: while any is, the watch looks
    PathSample path;                 // at the watch's last look
    std::uint64_t acknowledged = 0;  // the streams' acknowledged bytes then, added up
  };
  struct Op {
    SendRequest request;
    Completion done;
    ChunkFeed feed;       // a split message's pieces not handed to a stream yet
    int frames_left = 0;  // frames queued on streams and not written yet
    std::uint64_t handed_over = 0;
    Clock::time_point last_progress;
    std::vector<Stream*> streams;  // every stream that may carry a frame of it
    std::vector<Link*> links;      // their links
    bool split = false;
    bool resends = false;  // split over WAN links with resend_stalled: stalled shares go again
    bool stalled = false;  // split: a stream carrying it stalled (for the governor)
    MessagePace pace;
    bool finished = false;
    // Kept once the caller has its message back (keep_tail()): a copy of what TCP had not
    // acknowledged when the last frame went to the kernel; `request.bytes` is empty then.
    std::optional<KeptBytes> tail;

    std::uint64_t size() const { return tail ? tail->message_size() : request.bytes.size(); }
    std::span<const std::byte> bytes(const ByteRange& range) const {
      return tail ? tail->of(range) : request.bytes.subspan(range.offset, range.length);
    }
  };

  Link& link(int peer, int lane, LinkClass link_class);
  void connect(Link& link);
  // The peer sent first: its connections of the link carry this rank's messages too.
  bool answer_on_peer_connections(Link& link);
  std::string tune_as_own(asio::ip::tcp::socket& socket, LinkClass link_class) const;
  // Whether this side writes on the lower rank's connections of the link (send_side.cpp);
  // noting them per stream, and switching a stream onto its own once nothing is in flight.
  bool shares_lower_ranks_connections(const Link& link) const;
  void note_lower_ranks_connections(Link& link);
  void switch_to_lower_ranks_connection(Stream& stream);
  bool sends_to(int peer) const;
  void connected(Link& link, std::vector<int> fds, asio::ip::tcp protocol);
  void link_failed(Link& link, const Failure& reason);
  void send_whole(SendRequest request, Completion done, int streams);
  // A send in flight, kept until its last frame went to the kernel.
  std::shared_ptr<Op> add_op(SendRequest request, Completion done);
  void start_split(const std::shared_ptr<Op>& op);
  void pump(Stream& stream);
  bool take_piece(Stream& stream);
  bool takes_pieces(const Stream& stream) const;
  void written(Stream& stream, std::size_t bytes);
  void sent_whole(const std::shared_ptr<Op>& op);
  void finish(const std::shared_ptr<Op>& op, const Outcome& error);
  // Tells the governors of a split send's links how it went (once, when its caller learns it
  // succeeded).
  void report_message_done(const Op& op);
  void close_stream(Stream& stream, const Failure& reason);
  std::string peer_endpoint(int peer, int lane);
  // The stall watch of the WAN links and the re-sending of stalled shares
  // (send_side_stalls.cpp).
  StreamProgress probe(Stream& stream) const;
  void arm_watch();
  void look_at(Link& link, Clock::time_point now);
  void report_stalls(Link& link, const std::vector<Stream*>& newly_stalled, const PathSample& path,
                     std::uint64_t acknowledged, std::chrono::microseconds round_trip,
                     Clock::time_point now);
  bool in_endgame(const Op& op) const;
  bool link_in_endgame(const Link& link) const;
  static void forget_acknowledged(Stream& stream, const StreamProgress& progress);
  void resend_stalled_share(Stream& stream);
  void interrupted(Stream& stream, std::size_t bytes);
  void resend_share(Stream& stream, const std::shared_ptr<Op>& op, const ByteRange& unwritten);
  bool resend_stalled_shares(const std::shared_ptr<Op>& op);
  ByteRanges take_doubt(Stream& stream, const Op& op);
  // The kept tail (send_side_stalls.cpp).
  bool keep_tail(Op& op);
  void settle_tails();
  static bool holds_unacknowledged(const Stream& stream, const Op& op);

  EngineContext& context_;
  ReceiveSide& receive_;
  std::mutex addresses_mutex_;
  std::vector<std::vector<std::string>> addresses_;        // per peer, per lane
  std::vector<std::vector<std::unique_ptr<Link>>> links_;  // per peer, per lane; made on use
  template <typename Visit>
  void for_each_link(Visit visit) {
    for (auto& lanes : links_) {
      for (auto& link : lanes) {
        if (link) visit(*link);
      }
    }
  }
  std::list<std::shared_ptr<Op>> ops_;      // unfinished sends
  std::list<std::shared_ptr<Op>> feeding_;  // split sends with pieces left, oldest first
  asio::steady_timer watch_timer_;
  bool watching_ = false;
  std::atomic<std::uint64_t> stalls_{0};                   // shares of stalled streams sent again
  std::atomic<std::uint64_t> resent_bytes_{0};             // ... their bytes
  std::atomic<std::uint64_t> switched_to_lower_ranks_{0};  // streams moved to the peer's connection
};

}  // namespace multilane::runtime
