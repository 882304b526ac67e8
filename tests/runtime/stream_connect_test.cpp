// tests/runtime/stream_connect_test.cpp — a path's streams set up at once (connect_at_once).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "loopback.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;
using testing::loopback;

// A connection to `acceptor` (it waits in the backlog) on `own`, after `delay`, which stands
// for a handshake's round trips.
AuthenticatedStream slow_connection(asio::io_context& own, const asio::ip::tcp::acceptor& acceptor,
                                    int index, std::chrono::milliseconds delay) {
  std::this_thread::sleep_for(delay);
  asio::ip::tcp::socket socket(own);
  socket.connect(acceptor.local_endpoint());
  return {std::move(socket), static_cast<std::uint64_t>(index), false};
}

TEST(ConnectAtOnce, TheSetUpsOverlapAndTheStreamsComeInIndexOrderOnTheCallersContext) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, loopback(0));
  const auto started = std::chrono::steady_clock::now();
  auto streams = connect_at_once(io, 8, [&](int index, asio::io_context& own) {
    return slow_connection(own, acceptor, index, 200ms);
  });
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(streams.size(), 8u);
  for (std::size_t i = 0; i < streams.size(); ++i) {
    EXPECT_EQ(streams[i].identity, i);
    EXPECT_TRUE(streams[i].socket.is_open());
    EXPECT_EQ(&asio::query(streams[i].socket.get_executor(), asio::execution::context), &io);
  }
  EXPECT_LT(took, 800ms);  // one after another: 1.6 s
}

TEST(ConnectAtOnce, TheLowestFailingIndexIsThrownOnceEveryCallReturned) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, loopback(0));
  std::atomic<int> returned{0};
  EXPECT_THAT(
      [&] {
        connect_at_once(io, 4, [&](int index, asio::io_context& own) {
          auto stream = slow_connection(own, acceptor, index, 50ms * (4 - index));
          ++returned;
          if (index >= 1)
            throw TransportError(ErrorKind::peer_gone,
                                 "stream " + std::to_string(index) + " failed");
          return stream;
        });
      },
      ::testing::ThrowsMessage<TransportError>("stream 1 failed"));
  EXPECT_EQ(returned.load(), 4);
}

}  // namespace
}  // namespace multilane::runtime
