// tests/runtime/frame_writer_test.cpp — the frame writer shared by the Engine, StreamSet and the
// routers' links, over a loopback connection: large frames arrive byte-exact, and a write
// stopped through its cancellation slot reports exactly the bytes the peer then reads.
#include "runtime/tcp/frame_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "runtime/loopback.hpp"

namespace multilane::runtime {
namespace {

using testing::joined;
using testing::pattern;

// What a write_frame() handler was called with.
struct WriteResult {
  asio::error_code error;
  std::size_t bytes = 0;
};

class FrameWriterTest : public ::testing::Test {
 protected:
  void connect(bool small_buffers) { testing::connect_pair(io, writer, peer, small_buffers); }

  // Runs the io_context until the write completed (at most 10 s).
  bool run_until_written() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!result) {
      if (std::chrono::steady_clock::now() > until) return false;
      io.restart();
      io.run_one_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  // Everything the peer receives until the writer's end is shut down.
  std::vector<std::byte> read_to_end() {
    std::vector<std::byte> bytes;
    std::vector<std::byte> block(64 * 1024);
    asio::error_code error;
    while (!error) {
      const std::size_t n = peer.read_some(asio::buffer(block), error);
      bytes.insert(bytes.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(n));
    }
    EXPECT_EQ(error, asio::error::eof);
    return bytes;
  }

  void expect_arrives(std::span<const std::byte> head, std::span<const std::byte> body);

  auto record() {
    return [this](const asio::error_code& error, std::size_t bytes) {
      result = WriteResult{error, bytes};
    };
  }

  asio::io_context io;
  asio::ip::tcp::socket writer{io};
  asio::ip::tcp::socket peer{io};
  std::optional<WriteResult> result;
};

// Writes (head, body) to a peer that reads all of it, and checks what arrived.
void FrameWriterTest::expect_arrives(std::span<const std::byte> head,
                                     std::span<const std::byte> body) {
  connect(false);
  std::vector<std::byte> received(head.size() + body.size());
  std::thread reader([&] { asio::read(peer, asio::buffer(received)); });
  write_frame(writer, head, body, record());
  EXPECT_TRUE(run_until_written());
  reader.join();
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->error) << result->error.message();
  EXPECT_EQ(result->bytes, received.size());
  EXPECT_EQ(received, joined(head, body));
}

TEST_F(FrameWriterTest, LargeFrameArrivesByteExact) {
  expect_arrives(pattern(64, 3), pattern((1 << 20) + 3));
}

// A head longer than one call may write (StreamSet's owned frames hold header and payload).
TEST_F(FrameWriterTest, HeadLongerThanOneCallArrivesByteExact) {
  expect_arrives(pattern(kLargestWrite * 3 + 5, 11), pattern(kLargestWrite + 1));
}

// write_frame_now() writes what the kernel takes at once: a small frame (copied together and
// written with send()) and one just too large for that (sendmsg() of both parts) arrive whole,
// and a full socket takes nothing.
TEST_F(FrameWriterTest, WriteFrameNowWritesSmallAndLargerFramesWhole) {
  connect(true);
  const auto head = pattern(64, 5);
  std::vector<std::byte> expected;
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{8}, std::size_t{1024}, std::size_t{1025}, std::size_t{4000}}) {
    const auto body = pattern(size, static_cast<unsigned>(size));
    EXPECT_EQ(write_frame_now(writer, head, body), head.size() + size) << size << " bytes";
    const auto frame = joined(head, body);
    expected.insert(expected.end(), frame.begin(), frame.end());
  }
  std::vector<std::byte> received(expected.size());
  asio::read(peer, asio::buffer(received));
  EXPECT_EQ(received, expected);
  // Nobody reads: the socket fills up, and then takes nothing.
  const auto body = pattern(1000, 6);
  std::size_t rounds = 0;
  while (write_frame_now(writer, head, body) > 0 && rounds < 100'000) ++rounds;
  EXPECT_LT(rounds, 100'000u);
  EXPECT_EQ(write_frame_now(writer, head, body), 0u);
}

TEST_F(FrameWriterTest, CancelledWriteReportsExactlyTheBytesThePeerReads) {
  connect(true);
  const std::vector<std::byte> head = pattern(64, 5);
  const std::vector<std::byte> body = pattern(16 << 20);
  asio::cancellation_signal stop;
  write_frame(writer, head, body, asio::bind_cancellation_slot(stop.slot(), record()));
  // The peer does not read: the kernel's buffers fill and the write waits.
  io.run_for(std::chrono::milliseconds(200));
  ASSERT_FALSE(result) << "the whole frame went although the peer read nothing";
  stop.emit(asio::cancellation_type::terminal);
  ASSERT_TRUE(run_until_written());
  EXPECT_EQ(result->error, asio::error::operation_aborted);
  EXPECT_GT(result->bytes, 0u);
  EXPECT_LT(result->bytes, head.size() + body.size());
  writer.shutdown(asio::socket_base::shutdown_send);
  const std::vector<std::byte> received = read_to_end();
  EXPECT_EQ(received.size(), result->bytes);
  const std::vector<std::byte> frame = joined(head, body);
  EXPECT_TRUE(std::equal(received.begin(), received.end(), frame.begin()));
}

}  // namespace
}  // namespace multilane::runtime
