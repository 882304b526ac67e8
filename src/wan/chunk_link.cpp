// wan/chunk_link.cpp — asynchronous routed-chunk connection (see chunk_link.hpp).
#include "wan/chunk_link.hpp"

#include <fmt/format.h>

#include <array>

#include "runtime/transport/io_wait.hpp"

namespace multilane::wan {

ChunkLink::ChunkLink(asio::ip::tcp::socket socket, const runtime::FrameCheck& check,
                     Handlers handlers)
    : socket_(std::move(socket)),
      check_(check),
      handlers_(std::move(handlers)),
      name_(runtime::peer_name(socket_)) {}

void ChunkLink::start() {
  read_header();
}

void ChunkLink::resume() {
  if (!paused_ || closed_) return;
  paused_ = false;
  read_header();
}

void ChunkLink::read_header() {
  reading_ = true;
  asio::async_read(socket_, asio::buffer(header_in_),
                   [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                     self->reading_ = false;
                     if (ec) {
                       return self->fail(n == 0 && runtime::is_peer_gone(ec)
                                             ? fmt::format("{} closed the connection", self->name_)
                                             : fmt::format("reading from {} failed: {}",
                                                           self->name_, ec.message()));
                     }
                     auto decoded = decode_routed(self->header_in_, self->check_, self->name_);
                     if (auto* error = std::get_if<std::string>(&decoded))
                       return self->fail(*error);
                     self->read_payload(std::get<RoutedChunk>(decoded));
                   });
}

void ChunkLink::read_payload(const RoutedChunk& chunk) {
  const std::span<std::byte> target = handlers_.place(chunk);
  if (closed_) return;  // `place` refused the chunk and closed the link
  if (target.size() != chunk.frame.length) {
    return fail(fmt::format("no place for a chunk of {} bytes from {}", chunk.frame.length, name_));
  }
  reading_ = true;
  asio::async_read(socket_, asio::buffer(target.data(), target.size()),
                   [self = shared_from_this(), chunk](const asio::error_code& ec, std::size_t) {
                     self->reading_ = false;
                     if (ec) {
                       return self->fail(fmt::format("{} closed the connection inside a chunk ({})",
                                                     self->name_, ec.message()));
                     }
                     if (!self->handlers_.arrived(chunk)) {
                       self->paused_ = true;
                       return;
                     }
                     if (!self->closed_) self->read_header();
                   });
}

void ChunkLink::write(const RoutedChunk& chunk, std::span<const std::byte> payload,
                      std::function<void(bool)> done) {
  if (closed_) {
    if (done) done(false);
    return;
  }
  queued_bytes_ += payload.size();
  queue_.push_back({encode_routed(chunk), payload, std::move(done)});
  if (!writing_) write_next();
}

void ChunkLink::write_next() {
  if (queue_.empty() || closed_) return;
  writing_ = true;
  Outgoing& front = queue_.front();
  const std::array<asio::const_buffer, 2> parts{
      asio::buffer(front.header), asio::buffer(front.payload.data(), front.payload.size())};
  asio::async_write(
      socket_, parts, [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
        self->writing_ = false;
        // A write that completed after close(): close() took the queue and answered every
        // chunk in it, so there is no front to pop (popping an empty deque corrupted it).
        if (self->closed_) return;
        if (ec)
          return self->fail(fmt::format("sending to {} failed: {}", self->name_, ec.message()));
        Outgoing done = std::move(self->queue_.front());
        self->queue_.pop_front();
        self->queued_bytes_ -= done.payload.size();
        self->write_next();
        if (done.done) done.done(true);
      });
}

void ChunkLink::close() {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  auto queue = std::move(queue_);
  queue_.clear();
  queued_bytes_ = 0;
  for (auto& pending : queue) {
    if (pending.done) pending.done(false);
  }
}

void ChunkLink::fail(const std::string& why) {
  if (closed_) return;
  close();
  if (handlers_.failed) handlers_.failed(why);
}

}  // namespace multilane::wan
