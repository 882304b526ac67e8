// runtime/transport/send_side.hpp — outgoing connections and the cutting of messages over them
// (internal to the engine; see engine.hpp for the behaviour).
//
// Connections: the first of two ranks to send opens the K connections of a (peer, lane) link;
// the other sends back over them when it finds them (share_peer_connections), instead of opening
// its own. Each direction's acknowledgements then ride on the other's data: on loopback a pure
// acknowledgement per small message costs both ends more than a microsecond. Two ranks that
// start sending at once each open their own, and each uses its own.
//
// A message below the stripe threshold goes whole on one stream of the lanes it names (rotating
// by message id). A larger one is split: each of its streams takes the next piece when it has
// written its last one (chunk_feed.hpp), so a fast stream or lane carries more of it. On a WAN
// link a watch reads the streams' acknowledgements while a split send is in flight: a stalled
// stream takes no more pieces until it moves again (stall_watch.hpp), and only as many streams
// as the path carries without stalls take pieces at all (stream_governor.hpp). The streams
// keep the system's unsent queue (SocketTuning::unsent_limit 0): a short one, as the WAN
// channels keep, made the two-tree broadcast on the emulated grid 9% slower (more wake-ups
// for ranks that share their cores) and gained nothing on one path (docs/performance.md).
#pragma once

#include <asio.hpp>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/streams/chunk_feed.hpp"
#include "runtime/streams/stall_watch.hpp"
#include "runtime/streams/stream_governor.hpp"
#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/receive_side.hpp"
#include "runtime/transport/wire.hpp"

namespace multilane::runtime {

class SendSide {
 public:
  // `receive`: the engine's incoming streams, which share connections with this side.
  SendSide(EngineContext& context, ReceiveSide& receive);
  ~SendSide();

  void set_peer_addresses(int peer, std::vector<std::string> addresses);  // thread-safe
  void send(SendRequest request, Completion done);
  void check_timeouts(Clock::time_point now);
  void abandon_call(std::uint64_t sequence);

 private:
  struct Op;
  struct Job {
    std::shared_ptr<Op> op;
    FrameBytes header;
    std::span<const std::byte> payload;
    std::size_t written = 0;  // bytes of header and payload written at once (write_frame_now)
  };
  struct Link;
  struct Stream {
    Link* link = nullptr;
    int index = 0;                                // within its link
    std::optional<asio::ip::tcp::socket> socket;  // set once connected
    std::deque<Job> queue;
    bool writing = false;
    bool closed = false;
    bool stuck = false;  // stalled at the last look of the link's watch
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
    std::string failure;  // why the link is unusable, "" while fine
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
    bool stalled = false;  // split: a stream carrying it stalled (for the governor)
    MessagePace pace;
    bool finished = false;
  };

  Link& link(int peer, int lane, LinkClass link_class);
  void connect(Link& link);
  bool share_peer_connections(Link& link);
  void read_answers(Link& link, int index, asio::ip::tcp protocol);
  bool tune(Stream& stream, const SocketTuning& tuning);
  // `opened_here`: this rank opened the connections (the peer may send back over them).
  void connected(Link& link, std::vector<int> fds, asio::ip::tcp protocol, bool opened_here);
  void link_failed(Link& link, const std::string& reason);
  void start_split(const std::shared_ptr<Op>& op);
  void pump(Stream& stream);
  static bool idle(const Stream& stream);
  bool take_piece(Stream& stream);
  bool takes_pieces(const Stream& stream) const;
  void written(Stream& stream);
  void finish(const std::shared_ptr<Op>& op, const std::string& error);
  void close_stream(Stream& stream, const std::string& reason);
  std::string peer_endpoint(int peer, int lane);
  // The stall watch of the WAN links (see send_side.cpp).
  void arm_watch();
  void look_at(Link& link, Clock::time_point now);

  EngineContext& context_;
  ReceiveSide& receive_;
  std::mutex addresses_mutex_;
  std::vector<std::vector<std::string>> addresses_;  // per peer, per lane
  std::map<std::pair<int, int>, std::unique_ptr<Link>> links_;
  std::list<std::shared_ptr<Op>> ops_;      // unfinished sends
  std::list<std::shared_ptr<Op>> feeding_;  // split sends with pieces left, oldest first
  asio::steady_timer watch_timer_;
  bool watching_ = false;
};

}  // namespace multilane::runtime
