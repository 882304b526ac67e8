// runtime/transport/send_side.cpp — outgoing connections, chunking and writing (see engine.hpp).
#include "runtime/transport/send_side.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/transport/stream_identity.hpp"
#include "runtime/transport/transport_error.hpp"
#include "runtime/transport/whole_transfer.hpp"

namespace multilane::runtime {

SendSide::SendSide(EngineContext& context) : context_(context), addresses_(context.config.size) {}

SendSide::~SendSide() = default;

void SendSide::set_peer_addresses(int peer, std::vector<std::string> addresses) {
  std::lock_guard lock(addresses_mutex_);
  addresses_.at(peer) = std::move(addresses);
}

std::string SendSide::peer_endpoint(int peer, int lane) {
  std::lock_guard lock(addresses_mutex_);
  const auto& lanes = addresses_.at(peer);
  if (lanes.empty()) {
    throw TransportError(
        fmt::format("no address is known for rank {} (it did not publish its "
                    "lanes at the rendezvous)",
                    peer));
  }
  if (lane >= static_cast<int>(lanes.size())) {
    throw TransportError(fmt::format("rank {} listens on {} lane(s), lane {} was asked for", peer,
                                     lanes.size(), lane));
  }
  return lanes[lane];
}

SendSide::Link& SendSide::link(int peer, int lane, LinkClass link_class) {
  auto& slot = links_[{peer, lane}];
  if (!slot) {
    slot = std::make_unique<Link>();
    slot->peer = peer;
    slot->lane = lane;
    slot->link = link_class;
    const auto& settings = link_class == LinkClass::Wan ? context_.config.wan : context_.config.lan;
    for (int i = 0; i < std::max(1, settings.streams); ++i) {
      slot->streams.push_back(std::make_unique<Stream>());
      slot->streams.back()->link = slot.get();
    }
  }
  return *slot;
}

void SendSide::send(SendRequest request, Completion done) {
  auto op = std::make_shared<Op>();
  op->request = std::move(request);
  op->done = std::move(done);
  op->last_progress = Clock::now();
  ops_.push_back(op);
  const SendRequest& r = op->request;

  // Every stream of every lane the message may use, lane after lane.
  std::vector<Stream*> streams;
  for (int lane : r.lanes) {
    Link& l = link(r.peer, lane, r.link);
    if (!l.failure.empty()) return finish(op, l.failure);
    for (auto& stream : l.streams) streams.push_back(stream.get());
  }
  const int count = static_cast<int>(streams.size());
  const auto chunks = plan_chunks(r.bytes.size(), count, context_.config.stripe,
                                  static_cast<int>(r.key.message_id % count));
  op->chunks_left = static_cast<int>(chunks.size());
  const std::uint16_t flags = chunks.size() > 1 ? kFrameStriped : 0;
  for (const Chunk& chunk : chunks) {
    Stream& stream = *streams[chunk.stream];
    const FrameHeader header{flags,        context_.config.job_id, r.key.sequence, r.key.message_id,
                             chunk.offset, chunk.length,           r.bytes.size(), r.signature};
    stream.queue.push_back(
        Job{op, encode_frame_header(header), r.bytes.subspan(chunk.offset, chunk.length)});
    if (std::find(op->streams.begin(), op->streams.end(), &stream) == op->streams.end()) {
      op->streams.push_back(&stream);
    }
  }
  for (int lane : r.lanes) {
    Link& l = link(r.peer, lane, r.link);
    if (!l.streams.front()->socket && !l.connecting) connect(l);
  }
  for (Stream* stream : op->streams) pump(*stream);
}

void SendSide::connect(Link& link) {
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
    return link_failed(link, e.what());
  }
  Link* target = &link;
  context_.handshakes.start([this, target, peer, lane, count, tuning, local, remote_text] {
    const auto deadline = Clock::now() + context_.config.timeout;
    std::vector<int> fds;
    asio::ip::tcp protocol = asio::ip::tcp::v4();
    std::string error;
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
          throw TransportError(fmt::format("rank {} answered at {}, where rank {} listens",
                                           answer.rank, remote_text, peer));
        }
        fds.push_back(socket.release());
      }
    } catch (const std::exception& e) {
      error = fmt::format("could not connect to rank {} at {}: {}", peer, remote_text, e.what());
    }
    asio::post(context_.io, [this, target, fds = std::move(fds), protocol, error]() mutable {
      if (error.empty()) return connected(*target, std::move(fds), protocol);
      for (int fd : fds) ::close(fd);
      link_failed(*target, error);
    });
  });
}

void SendSide::connected(Link& link, std::vector<int> fds, asio::ip::tcp protocol) {
  link.connecting = false;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    Stream& stream = *link.streams[i];
    stream.socket.emplace(context_.io);
    stream.socket->assign(protocol, fds[i]);
    if (stream.closed) {  // failed while connecting
      asio::error_code ignored;
      stream.socket->close(ignored);
      continue;
    }
    pump(stream);
  }
}

void SendSide::link_failed(Link& link, const std::string& reason) {
  link.connecting = false;
  link.failure = reason;
  for (auto& stream : link.streams) close_stream(*stream, reason);
}

void SendSide::pump(Stream& stream) {
  if (stream.writing || stream.closed || !stream.socket || stream.queue.empty()) return;
  stream.writing = true;
  Job& job = stream.queue.front();
  write_whole(*stream.socket, std::as_bytes(std::span(job.header)), job.payload,
              [this, s = &stream](const asio::error_code& error, std::size_t) {
                s->writing = false;
                if (s->closed) return;
                if (error) {
                  const int peer = s->link->peer;
                  const std::string reason = fmt::format(
                      "sending to rank {} failed: {}{}", peer, error.message(),
                      error == asio::error::broken_pipe || error == asio::error::connection_reset
                          ? fmt::format(" (rank {} exited or died)", peer)
                          : "");
                  return link_failed(*s->link, reason);
                }
                Job job = std::move(s->queue.front());
                s->queue.pop_front();
                job.op->handed_over += job.payload.size();
                job.op->last_progress = Clock::now();
                if (--job.op->chunks_left == 0) finish(job.op, "");
                pump(*s);
              });
}

void SendSide::close_stream(Stream& stream, const std::string& reason) {
  if (stream.closed) return;
  stream.closed = true;
  if (stream.socket) {
    asio::error_code ignored;
    stream.socket->close(ignored);  // a write in progress ends with operation_aborted
  }
  std::deque<Job> jobs = std::move(stream.queue);
  stream.queue.clear();
  for (Job& job : jobs) finish(job.op, reason);
  if (stream.link->failure.empty()) stream.link->failure = reason;
}

void SendSide::finish(const std::shared_ptr<Op>& op, const std::string& error) {
  if (op->finished) return;
  op->finished = true;
  ops_.remove(op);
  if (!error.empty()) {
    // No byte of the buffer may be read once its owner heard of the failure: stop every
    // stream still holding a chunk of it.
    for (Stream* stream : op->streams) {
      const bool holds = std::any_of(stream->queue.begin(), stream->queue.end(),
                                     [&](const Job& job) { return job.op == op; });
      if (holds) close_stream(*stream, error);
    }
  }
  if (op->done) {
    Completion done = std::move(op->done);
    done(error);
  }
}

void SendSide::check_timeouts(Clock::time_point now) {
  std::vector<std::shared_ptr<Op>> expired;
  for (const auto& op : ops_) {
    if (now - op->last_progress >= context_.config.timeout) expired.push_back(op);
  }
  for (const auto& op : expired) {
    const auto& r = op->request;
    finish(op, fmt::format("timed out after {} sending to rank {} (message {} of call #{}): "
                           "handed over {} (is rank {} receiving?)",
                           seconds_text(context_.config.timeout), r.peer, r.key.message_id,
                           r.key.sequence, progress_text(op->handed_over, r.bytes.size()), r.peer));
  }
}

void SendSide::abandon_call(std::uint64_t sequence) {
  std::vector<std::shared_ptr<Op>> ops;
  for (const auto& op : ops_) {
    if (op->request.key.sequence == sequence) ops.push_back(op);
  }
  for (const auto& op : ops) finish(op, "abandoned");
}

}  // namespace multilane::runtime
