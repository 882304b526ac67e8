// runtime/transport/incoming_stream.hpp — one authenticated connection from a peer, read frame by
// frame (internal to the engine). Reads a header, asks the ReceiveSide where the chunk's bytes go,
// reads them there, and loops; pauses when told to park until place_again().
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>

#include "runtime/transport/receive_side.hpp"
#include "runtime/transport/wire.hpp"

namespace multilane::runtime {

class IncomingStream : public std::enable_shared_from_this<IncomingStream> {
 public:
  IncomingStream(ReceiveSide& side, EngineContext& context, asio::ip::tcp::socket socket, int peer,
                 int lane, int stream);
  void start();
  // Asks again where the parked chunk goes (its receive was posted) and goes on reading.
  void place_again();
  // Closes the connection; the ReceiveSide hears of it through stream_closed().
  void close(const std::string& reason);

  int peer() const { return peer_; }
  bool is_closed() const { return closed_; }
  // "rank 3 (lane 0, stream 1)"
  std::string name() const;

 private:
  void read_header();
  void on_header(const asio::error_code& error, std::size_t bytes);
  void place_chunk();
  void accept_chunk(const ReceiveSide::Target& target,
                    std::shared_ptr<ReceiveSide::EarlyChunk> early);
  void on_payload(const asio::error_code& error, std::shared_ptr<ReceiveSide::EarlyChunk> early);
  void fail_io(const asio::error_code& error, bool between_frames);

  ReceiveSide& side_;
  EngineContext& context_;
  asio::ip::tcp::socket socket_;
  int peer_;
  int lane_;
  int stream_;
  FrameBytes header_bytes_{};
  FrameHeader header_;
  bool closed_ = false;
};

}  // namespace multilane::runtime
