// runtime/transport/send_side.cpp — outgoing connections, chunking and writing (see engine.hpp).
#include "runtime/transport/send_side.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "runtime/tcp/frame_writer.hpp"
#include "runtime/tcp/stream_identity.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

namespace {

// Why a write failed: the error, or why the connection's reader closed it.
Failure write_failure(int peer, const asio::error_code& error, const Connection& connection) {
  if (connection.closed_because) return *connection.closed_because;
  const bool gone = error == asio::error::broken_pipe || error == asio::error::connection_reset;
  return {kind_of(error), fmt::format("sending to rank {} failed: {}{}", peer, error.message(),
                                      gone ? fmt::format(" (rank {} exited or died)", peer) : "")};
}

}  // namespace

SendSide::SendSide(EngineContext& context, ReceiveSide& receive)
    : context_(context),
      receive_(receive),
      addresses_(context.config.size),
      links_(context.config.size),
      sender_([this](StripeStream& stream) { pump(static_cast<Stream&>(stream)); },
              context.config.progress_probe),
      watch_timer_(context.io) {}

// Each stream's pending write ends before its cancellation signal is destroyed, also where a
// reader still holds the connection.
SendSide::~SendSide() {
  for_each_link([](Link& link) {
    for (auto& stream : link.owned) {
      if (stream->connection)
        stream->connection->close({ErrorKind::internal, "the engine stopped"});
    }
  });
}

void SendSide::set_peer_addresses(int peer, std::vector<std::string> addresses) {
  std::lock_guard lock(addresses_mutex_);
  addresses_.at(peer) = std::move(addresses);
}

std::string SendSide::peer_endpoint(int peer, int lane) {
  std::lock_guard lock(addresses_mutex_);
  const auto& lanes = addresses_.at(peer);
  if (lanes.empty()) {
    throw TransportError(ErrorKind::peer_gone,
                         fmt::format("no address is known for rank {} (it did not publish its "
                                     "lanes at the rendezvous)",
                                     peer));
  }
  if (lane >= static_cast<int>(lanes.size())) {
    throw TransportError(ErrorKind::mismatch,
                         fmt::format("rank {} listens on {} lane(s), lane {} was asked for", peer,
                                     lanes.size(), lane));
  }
  return lanes[lane];
}

SendSide::Link& SendSide::link(int peer, int lane, LinkClass link_class) {
  auto& lanes = links_.at(peer);
  if (lane >= static_cast<int>(lanes.size())) lanes.resize(lane + 1);
  auto& slot = lanes[lane];
  if (!slot) {
    const auto& settings = link_class == LinkClass::Wan ? context_.config.wan : context_.config.lan;
    const int streams = std::max(1, settings.streams);
    slot = std::make_unique<Link>(peer, lane, link_class, streams);
    for (int i = 0; i < streams; ++i) {
      auto stream = std::make_unique<Stream>();
      stream->link = slot.get();
      stream->index = i;
      slot->streams.push_back(stream.get());
      slot->owned.push_back(std::move(stream));
    }
  }
  return *slot;
}

void SendSide::send(SendRequest request, Completion done) {
  ++context_.demand.at(request.peer).sends;
  int streams = 0;  // of every lane the message may use
  for (int lane : request.lanes) {
    Link& l = link(request.peer, lane, request.link);
    if (l.failure) return done(l.failure);
    if (!l.owned.front()->connection && !l.connecting) connect(l);
    streams += static_cast<int>(l.streams.size());
  }
  if (is_striped(request.bytes.size(), streams, context_.config.stripe)) {
    for (int lane : request.lanes) {  // before the send is in flight on them
      for (auto& stream : link(request.peer, lane, request.link).owned)
        switch_to_lower_ranks_connection(*stream);
    }
    return start_split(new_op(std::move(request), std::move(done)));
  }
  send_whole(std::move(request), std::move(done), streams);
}

// A message below the stripe threshold goes whole on one stream of its lanes, by its id.
void SendSide::send_whole(SendRequest request, Completion done, int streams) {
  Stream* stream = nullptr;
  int index = static_cast<int>(request.key.message_id % static_cast<std::uint64_t>(streams));
  for (int lane : request.lanes) {
    Link& l = link(request.peer, lane, request.link);
    if (index < static_cast<int>(l.owned.size())) {
      stream = l.owned[static_cast<std::size_t>(index)].get();
      break;
    }
    index -= static_cast<int>(l.streams.size());
  }
  switch_to_lower_ranks_connection(*stream);
  const std::uint64_t size = request.bytes.size();
  const FrameHeader header{
      0,    context_.config.job_id, request.key.sequence, request.key.message_id, 0, size,
      size, request.signature};
  StripeOutbox::Frame frame{
      .header = encode_frame_header(header), .payload = request.bytes, .range = {0, size}};
  if (stream->idle()) {  // nothing queued or being written before it
    // Written by the caller: a small message completes within this call, with no record kept.
    frame.written =
        write_frame_now(stream->socket(), std::as_bytes(std::span(frame.header)), frame.payload);
    if (frame.written == frame.header.size() + size) {
      stream->out.wrote_directly(frame.written);
      done(kSucceeded);
      return pump(*stream);
    }
  }
  const std::shared_ptr<Op> op = new_op(std::move(request), std::move(done));
  op->frames_left = 1;
  op->streams = {stream};
  sender_.add(op);
  frame.message = op;
  stream->out.push(std::move(frame));
  pump(*stream);
}

std::shared_ptr<SendSide::Op> SendSide::new_op(SendRequest request, Completion done) const {
  auto op = std::make_shared<Op>();
  const std::uint64_t size = request.bytes.size();
  op->header = {.flags = kFrameStriped,
                .job_id = context_.config.job_id,
                .sequence = request.key.sequence,
                .message_id = request.key.message_id,
                .total = size,
                .signature = request.signature};
  op->bytes = request.bytes;
  op->request = std::move(request);
  op->done = std::move(done);
  return op;
}

// Pieces as the streams can take them: every idle stream takes one now, the others when they
// have written what they hold.
void SendSide::start_split(const std::shared_ptr<Op>& op) {
  const SendRequest& r = op->request;
  bool watched = false;
  for (int lane : r.lanes) {
    Link& l = link(r.peer, lane, r.link);
    op->links.push_back(&l);
    op->streams.insert(op->streams.end(), l.streams.begin(), l.streams.end());
    watched = watched || l.governor.adapts();
  }
  const Link& first = *static_cast<const Link*>(op->links.front());
  const auto& settings = first.link == LinkClass::Wan ? context_.config.wan : context_.config.lan;
  ChunkFeed feed(r.bytes.size(), static_cast<int>(op->streams.size()), kSmallestPiece,
                 largest_piece(context_.config.stripe.max_chunk, settings.socket.unsent_limit));
  sender_.start_split(op, std::move(feed), watched && context_.config.resend_stalled);
  if (watched) arm_watch();
}

void SendSide::connect(Link& link) {
  if (answer_on_peer_connections(link)) return;
  link.connecting = true;
  const int peer = link.peer;
  const int lane = link.lane;
  const int count = static_cast<int>(link.owned.size());
  const auto& settings = link.link == LinkClass::Wan ? context_.config.wan : context_.config.lan;
  const SocketTuning tuning = settings.socket;
  std::optional<asio::ip::address> local;
  const std::string& own = context_.config.lane_addresses.at(
      std::min<std::size_t>(lane, context_.config.lane_addresses.size() - 1));
  if (auto address = asio::ip::make_address(own); !address.is_unspecified()) local = address;
  std::string remote_text;
  try {
    remote_text = peer_endpoint(peer, lane);
  } catch (const TransportError& e) {
    return link_failed(link, Failure::of(e));
  }
  Link* target = &link;
  context_.handshakes.start([this, target, peer, lane, count, tuning, local, remote_text] {
    const auto deadline = Clock::now() + context_.config.timeout;
    std::vector<int> fds;
    asio::ip::tcp protocol = asio::ip::tcp::v4();
    Outcome error;
    try {
      const auto remote = parse_endpoint(remote_text, fmt::format("address of rank {}", peer));
      protocol = remote.protocol();
      for (int s = 0; s < count; ++s) {
        asio::io_context io;
        asio::ip::tcp::socket socket(io);
        connect_with_retry(io, socket, remote, local, deadline, tuning);
        context_.handshakes.watch(socket.native_handle());
        const int fd = socket.native_handle();
        const StreamIdentity answer = unpack_identity(
            authenticate(io, socket, Role::Connector,
                         context_.handshake(pack_identity({context_.config.rank, lane, s}))));
        context_.handshakes.unwatch(fd);
        if (answer.rank != peer) {
          throw TransportError(ErrorKind::protocol,
                               fmt::format("rank {} answered at {}, where rank {} listens",
                                           answer.rank, remote_text, peer));
        }
        fds.push_back(socket.release());
      }
    } catch (const std::exception& e) {
      error = Failure{kind_of(e), fmt::format("could not connect to rank {} at {}: {}", peer,
                                              remote_text, e.what())};
    }
    asio::post(context_.io, [this, target, fds = std::move(fds), protocol, error]() mutable {
      if (!error) return connected(*target, std::move(fds), protocol);
      for (int fd : fds) ::close(fd);
      link_failed(*target, *error);
    });
  });
}

// The peer sent first: its connections of this link carry this rank's messages too.
bool SendSide::answer_on_peer_connections(Link& link) {
  std::vector<std::shared_ptr<Connection>> connections =
      receive_.peer_connections(link.peer, link.lane, static_cast<int>(link.owned.size()));
  if (connections.empty()) return false;
  for (std::size_t i = 0; i < connections.size(); ++i) {
    Stream& stream = *link.owned[i];
    stream.connection = std::move(connections[i]);
    if (const std::string failed = tune_as_own(stream.socket(), link.link); !failed.empty()) {
      close_stream(stream, {ErrorKind::resource, fmt::format("tuning the connection from rank {} "
                                                             "failed: {}",
                                                             link.peer, failed)});
      continue;
    }
    pump(stream);
  }
  return true;
}

// This link class's tuning, as a connection opened here has it; "" or why it failed.
std::string SendSide::tune_as_own(asio::ip::tcp::socket& socket, LinkClass link_class) const {
  const auto& settings = link_class == LinkClass::Wan ? context_.config.wan : context_.config.lan;
  try {
    apply_buffer_sizes(socket, settings.socket);
    apply_connected_options(socket, settings.socket);
  } catch (const std::system_error& e) {
    return e.what();
  }
  return "";
}

void SendSide::connected(Link& link, std::vector<int> fds, asio::ip::tcp protocol) {
  link.connecting = false;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    Stream& stream = *link.owned[i];
    stream.connection = std::make_shared<Connection>(context_.io);
    stream.socket().assign(protocol, fds[i]);
    if (stream.closed) {  // failed while connecting
      asio::error_code ignored;
      stream.socket().close(ignored);
      continue;
    }
    // The peer may send back over it.
    receive_.adopt(stream.connection, link.peer, link.lane, static_cast<int>(i),
                   /*opened_by_peer=*/false);
  }
  note_lower_ranks_connections(link);  // if the peer opened its own meanwhile
  for (auto& stream : link.owned) pump(*stream);
}

// Two ranks that sent first at once each opened their own connections, and each direction would
// keep its own: every small message then costs an acknowledgement packet of its own (a third
// of the segments of an 8-rank alltoall of 8 B). On a LAN link the higher rank writes on the
// lower rank's connection instead, once its stream has nothing in flight, so each direction
// carries the other's acknowledgements. (WAN streams stay: their stall watch counts the bytes
// of one socket.)
bool SendSide::shares_lower_ranks_connections(const Link& link) const {
  return link.link == LinkClass::Lan && link.peer < context_.config.rank;
}

void SendSide::peer_opened_connection(int peer, int lane, int stream,
                                      const std::shared_ptr<Connection>& connection) {
  auto& lanes = links_.at(peer);
  if (lane >= static_cast<int>(lanes.size()) || !lanes[lane]) return;
  Link& link = *lanes[lane];
  if (!shares_lower_ranks_connections(link) || stream >= static_cast<int>(link.owned.size()))
    return;
  Stream& s = *link.owned[stream];
  if (!s.connection || s.connection == connection) return;  // not connected yet: connected()
  s.lower_ranks = connection;
  switch_to_lower_ranks_connection(s);
}

void SendSide::note_lower_ranks_connections(Link& link) {
  if (!shares_lower_ranks_connections(link)) return;
  for (auto& stream : link.owned) {
    stream->lower_ranks = receive_.peer_connection(link.peer, link.lane, stream->index);
  }
}

void SendSide::switch_to_lower_ranks_connection(Stream& stream) {
  if (!stream.lower_ranks || !stream.idle() || sends_to(static_cast<Link*>(stream.link)->peer))
    return;
  std::shared_ptr<Connection> theirs = std::move(stream.lower_ranks);
  if (!theirs->socket.is_open()) return;
  // Where it cannot be tuned, the stream stays on its own connection.
  if (!tune_as_own(theirs->socket, LinkClass::Lan).empty()) return;
  stream.connection = std::move(theirs);
  switched_to_lower_ranks_.fetch_add(1, std::memory_order_relaxed);
}

bool SendSide::sends_to(int peer) const {
  return std::any_of(sender_.messages().begin(), sender_.messages().end(),
                     [peer](const auto& message) { return op_of(message)->request.peer == peer; });
}

void SendSide::link_failed(Link& link, const Failure& reason) {
  link.connecting = false;
  link.failure = reason;
  for (auto& stream : link.owned) close_stream(*stream, reason);
  // Split sends over it that no stream of it holds a piece of yet (it was still connecting).
  std::vector<std::shared_ptr<Op>> waiting;
  for (const auto& message : sender_.messages()) {
    const auto& links = message->links;
    if (!message->feed.empty() && std::find(links.begin(), links.end(), &link) != links.end()) {
      waiting.push_back(op_of(message));
    }
  }
  for (const auto& op : waiting) finish(op, reason);
}

void SendSide::pump(Stream& stream) {
  if (stream.out.writing() || stream.closed || !stream.connection) return;
  switch_to_lower_ranks_connection(stream);
  if (stream.out.empty() && !sender_.take_piece(stream)) return;
  stream.out.write_next(stream.socket(),
                        [this, s = &stream](const asio::error_code& error, std::size_t bytes) {
                          if (s->closed) return;
                          Link& l = *static_cast<Link*>(s->link);
                          if (error == asio::error::operation_aborted && s->out.interrupting()) {
                            return sender_.interrupted(*s, bytes);
                          }
                          if (error)
                            return link_failed(l, write_failure(l.peer, error, *s->connection));
                          if (const auto message = sender_.written(*s, bytes))
                            sent_whole(op_of(message));
                          pump(*s);
                        });
}

// Every frame of `op` went to the kernel. A split send that re-sends stalled shares keeps a copy
// of what TCP has not acknowledged yet and lets its caller go; the watch drops the copy once
// TCP acknowledged it (settle_tails()). A kept tail's own copies end here too.
void SendSide::sent_whole(const std::shared_ptr<Op>& op) {
  if (op->tail) return;
  if (!sender_.keep_tail(*op)) return finish(op, kSucceeded);
  context_.own_work_began();  // the watch must go on looking after the caller moved on
  sender_.report_done(*op);
  Completion done = std::move(op->done);
  done(kSucceeded);
}

void SendSide::close_stream(Stream& stream, const Failure& reason) {
  if (stream.closed) return;
  stream.closed = true;
  if (stream.connection) {
    // Its reader here, if any, closes with the same reason; a write in progress ends with
    // operation_aborted.
    receive_.close_connection(*stream.connection, reason);
    stream.connection->close(reason);
  }
  for (StripeOutbox::Frame& frame : stream.out.take_all()) {
    if (frame.message) finish(op_of(frame.message), reason);
  }
  Link& link = *static_cast<Link*>(stream.link);
  if (!link.failure) link.failure = reason;
}

void SendSide::finish(const std::shared_ptr<Op>& op, const Outcome& error) {
  if (op->finished) return;
  sender_.forget(op);
  if (op->split && !op->tail && !error) sender_.report_done(*op);
  // A kept tail is a copy: failing it touches no caller's buffer.
  if (error && !op->tail) {
    // No byte of the buffer may be read once its owner heard of the failure: stop every
    // stream still holding a chunk of it.
    for (StripeStream* stream : op->streams) {
      const auto& frames = stream->out.frames();
      const bool holds = std::any_of(frames.begin(), frames.end(),
                                     [&](const auto& frame) { return frame.message == op; });
      if (holds) close_stream(static_cast<Stream&>(*stream), *error);
    }
  }
  if (op->tail) context_.own_work_ended();
  if (op->done) {
    Completion done = std::move(op->done);
    done(error);
  }
}

void SendSide::check_timeouts(Clock::time_point now) {
  std::vector<std::shared_ptr<Op>> expired;
  for (const auto& message : sender_.messages()) {
    if (now - message->last_progress >= context_.config.timeout) expired.push_back(op_of(message));
  }
  for (const auto& op : expired) {
    // A kept tail nobody acknowledged for that long is dropped: its caller is long gone.
    if (op->tail) {
      finish(op, kSucceeded);
      continue;
    }
    const auto& r = op->request;
    finish(op, Failure{ErrorKind::timeout,
                       fmt::format("timed out after {} sending to rank {} (message {} of call "
                                   "#{}): handed over {} (is rank {} receiving?)",
                                   seconds_text(context_.config.timeout), r.peer, r.key.message_id,
                                   r.key.sequence, progress_text(op->handed_over, op->size()),
                                   r.peer)});
  }
}

void SendSide::abandon_call(std::uint64_t sequence) {
  std::vector<std::shared_ptr<Op>> ops;
  for (const auto& message : sender_.messages()) {
    // A kept tail outlives its call: the peer may still need its bytes.
    const std::shared_ptr<Op> op = op_of(message);
    if (op->request.key.sequence == sequence && !op->tail) ops.push_back(op);
  }
  for (const auto& op : ops) finish(op, Failure{ErrorKind::internal, "abandoned"});
}

EngineSendCounters SendSide::counters() const {
  const StripeCounters stripes = sender_.counters();
  return {.stalls = stripes.stalls,
          .resent_bytes = stripes.resent_bytes,
          .moved_to_peer = switched_to_lower_ranks_.load(std::memory_order_relaxed)};
}

// The watch: every 10 ms while a split send is in flight over a WAN link, each of the link's
// streams is sampled (TCP_INFO; striped_sender.hpp says what follows from it): often enough to
// see a stall well within the patience (60 ms at least), and rarely enough that eight ranks
// sharing two cores do not spend them on TCP_INFO.
void SendSide::arm_watch() {
  constexpr auto kWatchInterval = std::chrono::milliseconds(10);
  if (watching_) return;
  watching_ = true;
  watch_timer_.expires_after(kWatchInterval);
  watch_timer_.async_wait([this](const asio::error_code& error) {
    watching_ = false;
    if (error) return;
    const auto now = Clock::now();
    bool busy = false;
    for_each_link([&](Link& l) {
      if (!l.governor.adapts()) return;
      if (l.split_messages > 0) {
        sender_.look_at(l, now, context_.config.stall_patience, context_.config.endgame_patience);
        busy = true;
      } else {
        for (auto& stream : l.owned) stream->stalled = false;  // the next send looks afresh
      }
    });
    settle_tails();
    if (busy) arm_watch();
  });
}

// The kept tails TCP acknowledged are done.
void SendSide::settle_tails() {
  for (const auto& message : sender_.settled_tails()) finish(op_of(message), kSucceeded);
}

}  // namespace multilane::runtime
