// tests/runtime/loopback.hpp — helpers for runtime tests over 127.0.0.1 only.
//
// Every helper is bounded in time (the transports' own timeouts) and joins its threads, so a
// failing test cannot hang or leak sockets.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "runtime/streams/stream_set.hpp"

namespace multilane::runtime::testing {

inline asio::ip::tcp::endpoint loopback(std::uint16_t port) {
  return {asio::ip::make_address_v4("127.0.0.1"), port};
}

// Bytes whose value depends on the position, so misplaced chunks show.
inline std::vector<std::byte> pattern(std::size_t size, unsigned seed = 7) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>((i * 131 + seed + (i >> 8)) & 0xff);
  }
  return bytes;
}

// Connects `writer` (on `io`) to `peer`, accepted over loopback. With `small_buffers`, both ends'
// kernel buffers are 64 KiB, so a peer that does not read stops the writer soon.
inline void connect_pair(asio::io_context& io, asio::ip::tcp::socket& writer,
                         asio::ip::tcp::socket& peer, bool small_buffers) {
  asio::ip::tcp::acceptor acceptor(io, loopback(0));
  if (small_buffers) {
    acceptor.set_option(asio::socket_base::receive_buffer_size(64 * 1024));
    writer.open(asio::ip::tcp::v4());
    writer.set_option(asio::socket_base::send_buffer_size(64 * 1024));
  }
  writer.connect(acceptor.local_endpoint());
  peer = acceptor.accept();
}

// A frame as the peer reads it: `head`, then `body`.
inline std::vector<std::byte> joined(std::span<const std::byte> head,
                                     std::span<const std::byte> body) {
  std::vector<std::byte> bytes(head.begin(), head.end());
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

inline StreamOptions test_options(int streams) {
  StreamOptions options;
  options.job_id = 42;
  options.secret = JobSecret::from_text("test secret");
  options.streams = streams;
  options.timeout = std::chrono::seconds(10);
  return options;
}

// Two ends of a stream set: first accepted by a listener, second connected to it.
inline std::pair<StreamSet, StreamSet> connected_sets(const StreamOptions& options) {
  StreamListener listener(loopback(0), options);
  auto connector = std::async(std::launch::async,
                              [&] { return connect_streams(loopback(listener.port()), options); });
  StreamSet accepted = listener.accept();
  return {std::move(accepted), connector.get()};
}

// A set whose streams connected one after another, so that its i-th stream is the i-th
// connection a proxy in between accepted (connect_streams opens them at once, in any order).
inline StreamSet connect_in_order(const asio::ip::tcp::endpoint& endpoint,
                                  const StreamOptions& options) {
  auto io = std::make_unique<asio::io_context>();
  const auto deadline = Clock::now() + options.timeout;
  std::vector<asio::ip::tcp::socket> sockets;
  for (int i = 0; i < options.streams; ++i) {
    sockets.push_back(connect_stream(*io, endpoint, deadline, options).socket);
  }
  return StreamSet(std::move(io), std::move(sockets), options);
}

// Runs `fn` on another thread; joined (and its exception rethrown by get()) before scope end.
template <typename Fn>
auto in_background(Fn fn) {
  return std::async(std::launch::async, std::move(fn));
}

}  // namespace multilane::runtime::testing
