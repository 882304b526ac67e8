// runtime/transport/incoming_stream.cpp — see incoming_stream.hpp.
#include "runtime/transport/incoming_stream.hpp"

#include "runtime/transport/whole_transfer.hpp"

#include <fmt/format.h>

namespace multilane::runtime {

IncomingStream::IncomingStream(ReceiveSide& side, EngineContext& context,
                               asio::ip::tcp::socket socket, int peer, int lane, int stream)
    : side_(side),
      context_(context),
      socket_(std::move(socket)),
      peer_(peer),
      lane_(lane),
      stream_(stream) {}

std::string IncomingStream::name() const {
  return fmt::format("rank {} (lane {}, stream {})", peer_, lane_, stream_);
}

void IncomingStream::start() {
  read_header();
}

void IncomingStream::read_header() {
  if (closed_) return;
  asio::async_read(socket_, asio::buffer(header_bytes_),
                   [self = shared_from_this()](const asio::error_code& error, std::size_t bytes) {
                     self->on_header(error, bytes);
                   });
}

void IncomingStream::on_header(const asio::error_code& error, std::size_t bytes) {
  if (closed_) return;
  if (error) return fail_io(error, bytes == 0);
  const FrameDecode decoded = decode_frame_header(
      header_bytes_, FrameCheck{context_.config.job_id, context_.config.max_message}, name());
  if (!decoded.header) {
    context_.log("closing the connection from " + decoded.error);
    return close(decoded.error);
  }
  header_ = *decoded.header;
  if (!context_.check_signature(peer_, header_.sequence, header_.signature)) {
    return close(
        fmt::format("{} sent a message of another call as call #{}", name(), header_.sequence));
  }
  place_chunk();
}

void IncomingStream::place_chunk() {
  std::shared_ptr<ReceiveSide::EarlyChunk> early;
  const ReceiveSide::Target target = side_.place_chunk(*this, header_, early);
  if (target.park) return;  // place_again() continues once the receive is posted
  accept_chunk(target, std::move(early));
}

void IncomingStream::place_again() {
  if (!closed_) place_chunk();
}

void IncomingStream::accept_chunk(const ReceiveSide::Target& target,
                                  std::shared_ptr<ReceiveSide::EarlyChunk> early) {
  if (!target.error.empty()) {
    context_.log("closing the connection from " + name() + ": " + target.error);
    return close(target.error);
  }
  if (target.bytes.empty()) return on_payload({}, std::move(early));
  read_whole(socket_, target.bytes,
             [self = shared_from_this(), early = std::move(early)](const asio::error_code& error,
                                                                   std::size_t) mutable {
               self->on_payload(error, std::move(early));
             });
}

void IncomingStream::on_payload(const asio::error_code& error,
                                std::shared_ptr<ReceiveSide::EarlyChunk> early) {
  if (closed_) return;
  if (error) return fail_io(error, false);
  const ReceiveSide::Key key{peer_, header_.sequence, header_.message_id};
  side_.chunk_done(key, header_, *this, std::move(early));
  read_header();
}

void IncomingStream::fail_io(const asio::error_code& error, bool between_frames) {
  if (error == asio::error::operation_aborted) return;
  const bool gone = error == asio::error::eof || error == asio::error::connection_reset;
  if (gone && between_frames) {
    return close(fmt::format("rank {} closed its connections (it exited or died)", peer_));
  }
  close(fmt::format("the connection from {} broke in the middle of a message: {}", name(),
                    gone ? "closed by the peer (did it die?)" : error.message()));
}

void IncomingStream::close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  side_.stream_closed(*this, reason);
}

}  // namespace multilane::runtime
