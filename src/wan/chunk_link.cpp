// wan/chunk_link.cpp — asynchronous routed-chunk connection (see chunk_link.hpp).
#include "wan/chunk_link.hpp"

#include <fmt/format.h>

#include "runtime/tcp/io_wait.hpp"

namespace multilane::wan {

ChunkLink::ChunkLink(asio::ip::tcp::socket socket, const runtime::FrameCheck& check,
                     Handlers handlers)
    : socket_(std::move(socket)),
      check_(check),
      handlers_(std::move(handlers)),
      name_(runtime::peer_name(socket_)),
      reader_(socket_, check_, name_, *this, scratch_, kRouteHeaderSize) {}

void ChunkLink::start() {
  reader_.start();
}

void ChunkLink::resume() {
  if (!paused_ || closed_) return;
  paused_ = false;
  reader_.resume();  // a header read meanwhile waits parked
}

std::shared_ptr<void> ChunkLink::keep_alive() {
  return shared_from_this();
}

bool ChunkLink::admit(runtime::FrameReader& reader, const runtime::FrameHeader& header) {
  const auto route = decode_route(reader.prefix().first<kRouteHeaderSize>(), name_);
  if (const auto* error = std::get_if<std::string>(&route)) {
    fail({ErrorKind::protocol, *error});
    return false;
  }
  chunk_ = {.from = std::get<Route>(route).from, .to = std::get<Route>(route).to, .frame = header};
  return true;
}

runtime::FramePlacement ChunkLink::place(runtime::FrameReader&, const runtime::FrameHeader&) {
  if (paused_) return runtime::FramePlacement::park();
  const std::span<std::byte> target = handlers_.place(chunk_);
  if (closed_) return runtime::FramePlacement::stop();  // `place` refused it and closed the link
  if (target.size() != chunk_.frame.length) {
    fail({ErrorKind::mismatch,
          fmt::format("no place for a chunk of {} bytes from {}", chunk_.frame.length, name_)});
    return runtime::FramePlacement::stop();
  }
  return runtime::FramePlacement::read(target);
}

void ChunkLink::frame_done(runtime::FrameReader&, const runtime::FrameHeader&) {
  if (!handlers_.arrived(chunk_)) paused_ = true;
}

void ChunkLink::bad_header(runtime::FrameReader&, const std::string& error) {
  fail({ErrorKind::protocol, error});
}

void ChunkLink::ended(runtime::FrameReader&, const asio::error_code& error, bool between_frames) {
  if (!between_frames) {
    return fail(
        {runtime::kind_of(error),
         fmt::format("{} closed the connection inside a chunk ({})", name_, error.message())});
  }
  fail({runtime::kind_of(error),
        runtime::is_peer_gone(error)
            ? fmt::format("{} closed the connection", name_)
            : fmt::format("reading from {} failed: {}", name_, error.message())});
}

void ChunkLink::write(const RoutedChunk& chunk, std::span<const std::byte> payload,
                      std::function<void(bool)> done) {
  if (closed_) {
    if (done) done(false);
    return;
  }
  queued_bytes_ += payload.size();
  outbox_.push({.header = encode_routed(chunk), .payload = payload, .message = std::move(done)});
  write_next();
}

void ChunkLink::write_next() {
  if (closed_) return;
  outbox_.write_next(
      socket_, [self = shared_from_this()](const asio::error_code& ec, std::size_t bytes) {
        // A write that completed after close(): close() took the queue and answered every chunk
        // in it, so there is no front to take.
        if (self->closed_) return;
        if (ec) {
          return self->fail({runtime::kind_of(ec),
                             fmt::format("sending to {} failed: {}", self->name_, ec.message())});
        }
        bool too_late = false;  // never interrupted
        Outbox::Frame sent = self->outbox_.wrote_front(bytes, too_late);
        self->queued_bytes_ -= sent.payload.size();
        self->write_next();
        if (sent.message) sent.message(true);
      });
}

void ChunkLink::close() {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  auto queue = outbox_.take_all();
  queued_bytes_ = 0;
  for (auto& pending : queue) {
    if (pending.message) pending.message(false);
  }
}

void ChunkLink::fail(const runtime::Failure& why) {
  if (closed_) return;
  close();
  if (handlers_.failed) handlers_.failed(why);
}

}  // namespace multilane::wan
