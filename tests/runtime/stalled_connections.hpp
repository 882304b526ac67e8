// tests/runtime/stalled_connections.hpp — connections that stop speaking, for the listeners'
// tests: each of the four listeners (the engine's, StreamListener, the WAN gate, the rendezvous
// server) must go on serving others and stop within a bounded time while such a connection
// hangs in its handshake.
//
//   Stall::before_hello   connects and says nothing, as a port scanner's connection does;
//   Stall::after_hello    sends a valid Hello of the listener's job (the listener answers with
//                         its own and waits for the proof) and stops there: a peer that hangs
//                         in the middle of the handshake.
#pragma once

#include <gtest/gtest.h>
#include <asio.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "loopback.hpp"
#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/handshake_messages.hpp"

namespace multilane::runtime::testing {

enum class Stall { before_hello, after_hello };

class StalledConnections {
 public:
  // `job_id` and `identity` go into the Hello of Stall::after_hello.
  StalledConnections(std::uint16_t port, std::size_t count, Stall stall = Stall::before_hello,
                     std::uint64_t job_id = 0, std::uint64_t identity = 0) {
    for (std::size_t i = 0; i < count; ++i) {
      asio::ip::tcp::socket& socket = sockets_.emplace_back(io_);
      socket.connect(loopback(port));
      if (stall == Stall::after_hello) say_hello(socket, job_id, identity);
    }
  }
  // True while the listener has not closed the connection (its handshake still waits; what
  // the listener sent is read and dropped).
  bool still_open(std::size_t i) {
    sockets_[i].non_blocking(true);
    std::array<std::byte, 256> bytes{};
    asio::error_code error;
    while (!error) sockets_[i].read_some(asio::buffer(bytes), error);
    return error == asio::error::would_block;
  }
  // True once the listener closed it (it waits up to `limit` for that).
  bool closed_within(std::size_t i, std::chrono::milliseconds limit) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
      if (!still_open(i)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  // Every connection is still waiting in its handshake.
  void expect_all_open() {
    for (std::size_t i = 0; i < sockets_.size(); ++i) EXPECT_TRUE(still_open(i)) << i;
  }
  // `stop` (the listener's end) returns within kStopBound and closes every connection, however
  // far off their handshake timeout is.
  static constexpr std::chrono::seconds kStopBound{2};
  void expect_closed_by(const std::function<void()>& stop) {
    const auto stopping = std::chrono::steady_clock::now();
    stop();
    EXPECT_LT(std::chrono::steady_clock::now() - stopping, kStopBound);
    for (std::size_t i = 0; i < sockets_.size(); ++i) {
      EXPECT_TRUE(closed_within(i, std::chrono::seconds(5))) << i;
    }
  }

 private:
  // Our Hello: the listener answers with its own (when it takes the connection up) and then
  // waits for our proof.
  static void say_hello(asio::ip::tcp::socket& socket, std::uint64_t job_id,
                        std::uint64_t identity) {
    const HandshakeConfig config{
        .job_id = job_id, .secret = JobSecret::from_text("unused"), .identity = identity};
    const Hello hello = make_hello(Role::Connector, config, Nonce{});
    asio::write(socket, asio::buffer(hello));
  }

  asio::io_context io_;
  std::vector<asio::ip::tcp::socket> sockets_;
};

}  // namespace multilane::runtime::testing
