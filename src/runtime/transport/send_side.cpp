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
      watch_timer_(context.io) {}

// Each stream's pending write ends before its cancellation signal is destroyed, also where a
// reader still holds the connection.
SendSide::~SendSide() {
  for_each_link([](Link& link) {
    for (auto& stream : link.streams) {
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
      slot->streams.push_back(std::make_unique<Stream>());
      slot->streams.back()->link = slot.get();
      slot->streams.back()->index = i;
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
    if (!l.streams.front()->connection && !l.connecting) connect(l);
    streams += static_cast<int>(l.streams.size());
  }
  if (is_striped(request.bytes.size(), streams, context_.config.stripe)) {
    for (int lane : request.lanes) {  // before the send is in flight on them
      for (auto& stream : link(request.peer, lane, request.link).streams)
        switch_to_lower_ranks_connection(*stream);
    }
    return start_split(add_op(std::move(request), std::move(done)));
  }
  send_whole(std::move(request), std::move(done), streams);
}

// A message below the stripe threshold goes whole on one stream of its lanes, by its id.
void SendSide::send_whole(SendRequest request, Completion done, int streams) {
  Stream* stream = nullptr;
  int index = static_cast<int>(request.key.message_id % static_cast<std::uint64_t>(streams));
  for (int lane : request.lanes) {
    Link& l = link(request.peer, lane, request.link);
    if (index < static_cast<int>(l.streams.size())) {
      stream = l.streams[static_cast<std::size_t>(index)].get();
      break;
    }
    index -= static_cast<int>(l.streams.size());
  }
  switch_to_lower_ranks_connection(*stream);
  const std::uint64_t size = request.bytes.size();
  const FrameHeader header{
      0,    context_.config.job_id, request.key.sequence, request.key.message_id, 0, size,
      size, request.signature};
  Frame frame{.header = encode_frame_header(header), .payload = request.bytes, .range = {0, size}};
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
  frame.message = add_op(std::move(request), std::move(done));
  frame.message->frames_left = 1;
  frame.message->streams = {stream};
  stream->out.push(std::move(frame));
  pump(*stream);
}

std::shared_ptr<SendSide::Op> SendSide::add_op(SendRequest request, Completion done) {
  auto op = std::make_shared<Op>();
  op->request = std::move(request);
  op->done = std::move(done);
  op->last_progress = Clock::now();
  ops_.push_back(op);
  return op;
}

// Pieces as the streams can take them: every idle stream takes one now, the others when they
// have written what they hold.
void SendSide::start_split(const std::shared_ptr<Op>& op) {
  const SendRequest& r = op->request;
  for (int lane : r.lanes) {
    Link& l = link(r.peer, lane, r.link);
    op->links.push_back(&l);
    for (auto& stream : l.streams) op->streams.push_back(stream.get());
  }
  const Link& first = *op->links.front();
  const auto& settings = first.link == LinkClass::Wan ? context_.config.wan : context_.config.lan;
  op->split = true;
  op->feed =
      ChunkFeed(r.bytes.size(), static_cast<int>(op->streams.size()), kSmallestPiece,
                largest_piece(context_.config.stripe.max_chunk, settings.socket.unsent_limit));
  feeding_.push_back(op);
  bool watched = false;
  for (Link* l : op->links) {
    ++l->split_sends;
    watched = watched || l->governor.adapts();
  }
  op->resends = watched && context_.config.resend_stalled;
  if (watched) {
    // The acknowledgements as the watch last saw them, not asked afresh: a split message then
    // costs no system call per stream (the rate it yields is a little high at first).
    op->pace.started = Clock::now();
    for (Link* l : op->links) op->pace.acknowledged_at_start += l->acknowledged;
    arm_watch();
  }
  for (Stream* stream : op->streams) pump(*stream);
}

void SendSide::connect(Link& link) {
  if (answer_on_peer_connections(link)) return;
  link.connecting = true;
  const int peer = link.peer;
  const int lane = link.lane;
  const int count = static_cast<int>(link.streams.size());
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
      receive_.peer_connections(link.peer, link.lane, static_cast<int>(link.streams.size()));
  if (connections.empty()) return false;
  for (std::size_t i = 0; i < connections.size(); ++i) {
    Stream& stream = *link.streams[i];
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
    Stream& stream = *link.streams[i];
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
  for (auto& stream : link.streams) pump(*stream);
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
  if (!shares_lower_ranks_connections(link) || stream >= static_cast<int>(link.streams.size()))
    return;
  Stream& s = *link.streams[stream];
  if (!s.connection || s.connection == connection) return;  // not connected yet: connected()
  s.lower_ranks = connection;
  switch_to_lower_ranks_connection(s);
}

void SendSide::note_lower_ranks_connections(Link& link) {
  if (!shares_lower_ranks_connections(link)) return;
  for (auto& stream : link.streams) {
    stream->lower_ranks = receive_.peer_connection(link.peer, link.lane, stream->index);
  }
}

void SendSide::switch_to_lower_ranks_connection(Stream& stream) {
  if (!stream.lower_ranks || !stream.idle() || sends_to(stream.link->peer)) return;
  std::shared_ptr<Connection> theirs = std::move(stream.lower_ranks);
  if (!theirs->socket.is_open()) return;
  // Where it cannot be tuned, the stream stays on its own connection.
  if (!tune_as_own(theirs->socket, LinkClass::Lan).empty()) return;
  stream.connection = std::move(theirs);
  switched_to_lower_ranks_.fetch_add(1, std::memory_order_relaxed);
}

bool SendSide::sends_to(int peer) const {
  return std::any_of(ops_.begin(), ops_.end(),
                     [peer](const auto& op) { return op->request.peer == peer; });
}

void SendSide::link_failed(Link& link, const Failure& reason) {
  link.connecting = false;
  link.failure = reason;
  for (auto& stream : link.streams) close_stream(*stream, reason);
  // Split sends over it that no stream of it holds a piece of yet (it was still connecting).
  std::vector<std::shared_ptr<Op>> waiting;
  for (const auto& op : feeding_) {
    if (std::find(op->links.begin(), op->links.end(), &link) != op->links.end()) {
      waiting.push_back(op);
    }
  }
  for (const auto& op : waiting) finish(op, reason);
}

void SendSide::pump(Stream& stream) {
  if (stream.out.writing() || stream.closed || !stream.connection) return;
  switch_to_lower_ranks_connection(stream);
  if (stream.out.empty() && !take_piece(stream)) return;
  stream.out.write_next(
      stream.socket(), [this, s = &stream](const asio::error_code& error, std::size_t bytes) {
        if (s->closed) return;
        if (error == asio::error::operation_aborted && s->out.interrupting()) {
          return interrupted(*s, bytes);
        }
        if (error)
          return link_failed(*s->link, write_failure(s->link->peer, error, *s->connection));
        written(*s, bytes);
      });
}

// Queues on `stream` the next piece of the oldest split send it may carry; false if none.
bool SendSide::take_piece(Stream& stream) {
  if (!takes_pieces(stream)) return false;
  for (auto it = feeding_.begin(); it != feeding_.end(); ++it) {
    const std::shared_ptr<Op> op = *it;
    if (std::find(op->streams.begin(), op->streams.end(), &stream) == op->streams.end()) continue;
    const auto piece = op->feed.next();  // a send in feeding_ has pieces left
    if (op->feed.empty()) feeding_.erase(it);
    const SendRequest& r = op->request;
    const std::uint16_t flags = kFrameStriped | (piece->resent ? kFrameResent : 0);
    const FrameHeader header{flags,
                             context_.config.job_id,
                             r.key.sequence,
                             r.key.message_id,
                             piece->range.offset,
                             piece->range.length,
                             op->size(),
                             r.signature};
    stream.out.push(Frame{.header = encode_frame_header(header),
                          .payload = op->bytes(piece->range),
                          .range = piece->range,
                          .message = op});
    ++op->frames_left;
    return true;
  }
  return false;
}

// Whether `stream` takes pieces: not while stalled, and only among the first in_use() streams
// of its link that are not stalled.
bool SendSide::takes_pieces(const Stream& stream) const {
  if (stream.stalled) return false;
  int position = 0;
  for (const auto& other : stream.link->streams) {
    if (other.get() == &stream) break;
    if (!other->stalled) ++position;
  }
  return position < stream.link->governor.in_use();
}

// The front frame of `stream` went to the kernel (`bytes`: all of it).
void SendSide::written(Stream& stream, std::size_t bytes) {
  // A cancellation that came when the frame had gone whole: its share goes again all the same.
  bool too_late = false;
  Frame frame = stream.out.wrote_front(bytes, too_late);
  if (frame.rest) return pump(stream);
  const std::shared_ptr<Op> op = std::move(frame.message);
  if (op->resends) stream.out.record(frame.range, op);
  op->handed_over += frame.payload.size();
  op->last_progress = Clock::now();
  --op->frames_left;
  if (too_late) resend_share(stream, op, {});
  const bool pieces_left = op->split && !op->feed.empty();
  if (op->frames_left == 0 && !pieces_left && !resend_stalled_shares(op)) sent_whole(op);
  pump(stream);
}

// Every frame of `op` went to the kernel. A split send that re-sends stalled shares keeps a copy
// of what TCP has not acknowledged yet and lets its caller go; the watch drops the copy once
// TCP acknowledged it (settle_tails()). A kept tail's own copies end here too.
void SendSide::sent_whole(const std::shared_ptr<Op>& op) {
  if (op->tail) return;
  if (!keep_tail(*op)) return finish(op, kSucceeded);
  report_message_done(*op);
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
  for (Frame& frame : stream.out.take_all()) {
    if (frame.message) finish(frame.message, reason);
  }
  if (!stream.link->failure) stream.link->failure = reason;
}

void SendSide::finish(const std::shared_ptr<Op>& op, const Outcome& error) {
  if (op->finished) return;
  op->finished = true;
  ops_.remove(op);
  if (op->split) {
    feeding_.remove(op);
    for (Stream* stream : op->streams) {
      stream->out.forget([&](const Outbox::Written& w) { return w.message == op; });
    }
    for (Link* l : op->links) --l->split_sends;
    if (!op->tail && !error) report_message_done(*op);
  }
  // A kept tail is a copy: failing it touches no caller's buffer.
  if (error && !op->tail) {
    // No byte of the buffer may be read once its owner heard of the failure: stop every
    // stream still holding a chunk of it.
    for (Stream* stream : op->streams) {
      const bool holds = std::any_of(stream->out.frames().begin(), stream->out.frames().end(),
                                     [&](const Frame& frame) { return frame.message == op; });
      if (holds) close_stream(*stream, *error);
    }
  }
  if (op->tail) context_.own_work_ended();
  if (op->done) {
    Completion done = std::move(op->done);
    done(error);
  }
}

void SendSide::report_message_done(const Op& op) {
  const auto now = Clock::now();
  for (Link* l : op.links) {
    if (!l->governor.adapts()) continue;
    PathSample path = l->path;
    path.delivered_rate = op.pace.message_rate(now, op.size());
    l->governor.message_done(op.stalled, path);
  }
}

void SendSide::check_timeouts(Clock::time_point now) {
  std::vector<std::shared_ptr<Op>> expired;
  for (const auto& op : ops_) {
    if (now - op->last_progress >= context_.config.timeout) expired.push_back(op);
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
  for (const auto& op : ops_) {
    // A kept tail outlives its call: the peer may still need its bytes.
    if (op->request.key.sequence == sequence && !op->tail) ops.push_back(op);
  }
  for (const auto& op : ops) finish(op, Failure{ErrorKind::internal, "abandoned"});
}

}  // namespace multilane::runtime
