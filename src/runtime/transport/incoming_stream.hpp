// runtime/transport/incoming_stream.hpp — one authenticated connection from a peer, read frame by
// frame (internal to the engine). Its FrameReader reads the headers; the stream checks each
// call's signature, asks the ReceiveSide where the chunk's bytes go, and tells it when they are
// in; a chunk the ReceiveSide cannot take yet parks the reader until place_again().
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/tcp/frame_reader.hpp"
#include "runtime/tcp/wire.hpp"
#include "runtime/transport/connection.hpp"
#include "runtime/transport/receive_side.hpp"

namespace multilane::runtime {

class IncomingStream final : public std::enable_shared_from_this<IncomingStream>,
                             private FrameSink {
 public:
  // `scratch`: see FrameReader. `opened_by_peer`: accepted here, not one of this rank's own
  // connections, which the peer may send back over.
  IncomingStream(ReceiveSide& side, EngineContext& context, std::shared_ptr<Connection> connection,
                 int peer, int lane, int stream, bool opened_by_peer,
                 std::vector<std::byte>& scratch);
  void start();
  // Asks again where the parked chunk goes (its receive was posted) and goes on reading.
  void place_again();
  // The rest of the chunk being read is dropped: its receive completed from other streams.
  void drop_rest() { reader_.stop_payload(); }
  // Closes the connection; the ReceiveSide hears of it through stream_closed().
  void close(const Failure& reason);

  int peer() const { return peer_; }
  int lane() const { return lane_; }
  int stream() const { return stream_; }
  bool opened_by_peer() const { return opened_by_peer_; }
  const std::shared_ptr<Connection>& connection() const { return connection_; }
  bool is_closed() const { return closed_; }
  // "rank 3 (lane 0, stream 1)"
  const std::string& name() const { return reader_.name(); }

 private:
  bool admit(FrameReader& reader, const FrameHeader& header) override;
  FramePlacement place(FrameReader& reader, const FrameHeader& header) override;
  void frame_done(FrameReader& reader, const FrameHeader& header) override;
  void bad_header(FrameReader& reader, const std::string& error) override;
  void ended(FrameReader& reader, const asio::error_code& error, bool between_frames) override;
  std::shared_ptr<void> keep_alive() override { return shared_from_this(); }

  ReceiveSide& side_;
  EngineContext& context_;
  std::shared_ptr<Connection> connection_;
  int peer_;
  int lane_;
  int stream_;
  bool opened_by_peer_;
  FrameReader reader_;
  std::shared_ptr<ReceiveSide::EarlyChunk> early_;  // of the chunk being read, if it is early
  bool closed_ = false;
};

}  // namespace multilane::runtime
