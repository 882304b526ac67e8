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
// by message id). A larger one is split over the streams of its lanes by the striped sender
// (striped_sender.hpp): each stream takes the next piece when it has written its last one, so a
// fast stream or lane carries more of it. On a WAN link a watch samples the streams every 10 ms
// while a split send is in flight: stalled streams take no more pieces, only as many streams as
// the path carries without stalls take pieces at all, a stalled stream's doubtful share goes out
// again on the others in the end game (EngineConfig::resend_stalled), and once its last frame is
// in the kernel a send completes keeping a copy of what TCP has not acknowledged yet (the kept
// tail).
// The streams keep the system's unsent queue (SocketTuning::unsent_limit 0): a short one, as the
// WAN channels keep, made the two-tree broadcast on the emulated grid 9% slower (more wake-ups for
// ranks that share their cores) and gained nothing on one path (docs/performance.md).
#pragma once

#include <asio.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/tcp/striped_sender.hpp"
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
  struct Stream final : StripeStream {
    int fd() override { return connection ? connection->socket.native_handle() : -1; }
    bool open() const override { return connection && !closed; }
    asio::ip::tcp::socket& socket() const { return connection->socket; }
    // The outbox is the base's, declared before the connection, and the connection is closed in
    // ~SendSide, so the outbox outlives the write under way.
    std::shared_ptr<Connection> connection;  // set once connected; a reader shares it
    // The lower rank's connection of this stream, to write on once nothing is in flight.
    std::shared_ptr<Connection> lower_ranks;
    bool closed = false;
  };
  struct Link : StripeLink {
    Link(int peer, int lane, LinkClass link_class, int streams)
        : StripeLink(streams, link_class == LinkClass::Wan),
          peer(peer),
          lane(lane),
          link(link_class) {
      destination = peer;
    }
    int peer = 0;
    int lane = 0;
    LinkClass link = LinkClass::Lan;
    std::vector<std::unique_ptr<Stream>> owned;  // StripeLink::streams points at them
    bool connecting = false;
    Outcome failure;  // why the link is unusable, nullopt while fine
  };
  // A send in flight: kept until its last frame went to the kernel, or its kept tail settled.
  struct Op : StripedMessage {
    SendRequest request;
    Completion done;
  };
  static std::shared_ptr<Op> op_of(const std::shared_ptr<StripedMessage>& message) {
    return std::static_pointer_cast<Op>(message);
  }

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
  std::shared_ptr<Op> new_op(SendRequest request, Completion done) const;
  void start_split(const std::shared_ptr<Op>& op);
  void pump(Stream& stream);
  void sent_whole(const std::shared_ptr<Op>& op);
  void finish(const std::shared_ptr<Op>& op, const Outcome& error);
  void close_stream(Stream& stream, const Failure& reason);
  std::string peer_endpoint(int peer, int lane);
  // The watch of the WAN links while split sends are in flight over them.
  void arm_watch();
  void settle_tails();

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
  StripedSender sender_;
  asio::steady_timer watch_timer_;
  bool watching_ = false;
  std::atomic<std::uint64_t> switched_to_lower_ranks_{0};  // streams moved to the peer's connection
};

}  // namespace multilane::runtime
