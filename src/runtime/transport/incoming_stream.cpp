// runtime/transport/incoming_stream.cpp — see incoming_stream.hpp.
#include "runtime/transport/incoming_stream.hpp"

#include <fmt/format.h>

#include "runtime/transport/call_space.hpp"

namespace multilane::runtime {

IncomingStream::IncomingStream(ReceiveSide& side, EngineContext& context,
                               std::shared_ptr<Connection> connection, int peer, int lane,
                               int stream, bool opened_by_peer, std::vector<std::byte>& scratch)
    : side_(side),
      context_(context),
      connection_(std::move(connection)),
      peer_(peer),
      lane_(lane),
      stream_(stream),
      opened_by_peer_(opened_by_peer),
      reader_(connection_->socket, FrameCheck{context.config.job_id, context.config.max_message},
              fmt::format("rank {} (lane {}, stream {})", peer, lane, stream), *this, scratch,
              /*prefix=*/0, &context.polled_readers) {
  reader_.follow_demand(context.demand.at(peer));
}

void IncomingStream::start() {
  reader_.start();
}

void IncomingStream::place_again() {
  if (!closed_) reader_.resume();
}

bool IncomingStream::admit(FrameReader&, const FrameHeader& header) {
  // A late copy of a message that completed is dropped (place()), also once its call ended.
  if (side_.completed_lately({peer_, header.sequence, header.message_id})) return true;
  if (context_.check_signature(peer_, header.sequence, header.signature)) return true;
  close({ErrorKind::mismatch, fmt::format("{} sent a message of another call as call {}", name(),
                                          call_label(header.sequence))});
  return false;
}

FramePlacement IncomingStream::place(FrameReader&, const FrameHeader& header) {
  early_.reset();
  const ReceiveSide::Target target = side_.place_chunk(*this, header, early_);
  if (target.park) return FramePlacement::park();  // place_again() once the receive is posted
  if (target.drop) return FramePlacement::discard();
  if (target.error) {
    context_.log("closing the connection from " + name() + ": " + target.error->text);
    close(*target.error);
    return FramePlacement::stop();
  }
  return FramePlacement::read(target.bytes);
}

void IncomingStream::frame_done(FrameReader&, const FrameHeader& header) {
  const ReceiveSide::Key key{peer_, header.sequence, header.message_id};
  side_.chunk_done(key, header, *this, std::move(early_));
}

void IncomingStream::bad_header(FrameReader&, const std::string& error) {
  context_.log("closing the connection from " + error);
  close({ErrorKind::protocol, error});
}

void IncomingStream::ended(FrameReader&, const asio::error_code& error, bool between_frames) {
  if (error == asio::error::operation_aborted) return;
  const bool gone = error == asio::error::eof || error == asio::error::connection_reset;
  if (gone && between_frames) {
    return close({ErrorKind::peer_gone,
                  fmt::format("rank {} closed its connections (it exited or died)", peer_)});
  }
  close({kind_of(error),
         fmt::format("the connection from {} broke in the middle of a message: {}", name(),
                     gone ? "closed by the peer (did it die?)" : error.message())});
}

void IncomingStream::close(const Failure& reason) {
  if (closed_) return;
  closed_ = true;
  connection_->close(reason);
  side_.stream_closed(*this, reason);
}

}  // namespace multilane::runtime
