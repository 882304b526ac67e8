// wan/chunk_link.hpp — one connection of the aggregate-router network, read and written
// asynchronously on an event loop.
//
// Reading: the stream core's frame reader (runtime/tcp/frame_reader.hpp) takes a routed
// header (route_header.hpp: the route, then the frame header), asks `place` where the chunk's
// bytes go (a span of exactly `frame.length` bytes: a posted receive buffer, a buffer for an
// early message, a router's forwarding buffer), reads them there and calls `arrived`; when
// that returns false the link takes no further chunk until resume() (a router's flow
// control; the next header may already be read). Writing: write() queues a header and a payload
// that must stay valid until `done` is called; chunks go out in queue order (the stream core's
// frame outbox, runtime/tcp/frame_outbox.hpp). Any failure (the peer
// closed, a bad header, a write error) closes the link and calls `failed` once with a sentence
// naming the peer.
//
// Links are shared_ptr-owned: pending handlers keep them alive, so an owner may drop a link
// from inside its callbacks. Not thread-safe: use it from the loop's thread only.
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/tcp/frame_outbox.hpp"
#include "runtime/tcp/frame_reader.hpp"
#include "wan/route_header.hpp"

namespace multilane::wan {

class ChunkLink final : public std::enable_shared_from_this<ChunkLink>, private runtime::FrameSink {
 public:
  struct Handlers {
    std::function<std::span<std::byte>(const RoutedChunk&)> place;
    std::function<bool(const RoutedChunk&)> arrived;
    std::function<void(const runtime::Failure&)> failed;
  };

  ChunkLink(asio::ip::tcp::socket socket, const runtime::FrameCheck& check, Handlers handlers);
  void start();
  void resume();
  void write(const RoutedChunk& chunk, std::span<const std::byte> payload,
             std::function<void(bool ok)> done);
  std::uint64_t queued_bytes() const { return queued_bytes_; }
  void close();
  bool closed() const { return closed_; }
  bool idle() const { return !reader_.busy() && !outbox_.writing(); }  // no operation outstanding
  const std::string& name() const { return name_; }

 private:
  // Each queued chunk names the callback that hears whether it went.
  using Outbox = runtime::FrameOutbox<std::function<void(bool ok)>, RoutedHeaderBytes>;
  // runtime::FrameSink
  bool admit(runtime::FrameReader& reader, const runtime::FrameHeader& header) override;
  runtime::FramePlacement place(runtime::FrameReader& reader,
                                const runtime::FrameHeader& header) override;
  void frame_done(runtime::FrameReader& reader, const runtime::FrameHeader& header) override;
  void bad_header(runtime::FrameReader& reader, const std::string& error) override;
  void ended(runtime::FrameReader& reader, const asio::error_code& error,
             bool between_frames) override;
  std::shared_ptr<void> keep_alive() override;
  void write_next();
  void fail(const runtime::Failure& why);

  asio::ip::tcp::socket socket_;
  runtime::FrameCheck check_;
  Handlers handlers_;
  std::string name_;
  std::vector<std::byte> scratch_;
  runtime::FrameReader reader_;
  RoutedChunk chunk_;  // the chunk being read
  bool paused_ = false;
  Outbox outbox_;
  std::uint64_t queued_bytes_ = 0;
  bool closed_ = false;
};

}  // namespace multilane::wan
