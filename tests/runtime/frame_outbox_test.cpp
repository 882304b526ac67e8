// tests/runtime/frame_outbox_test.cpp — the frame queue every sender writes through, over a
// loopback connection: frames leave in order and byte-exact, an interrupted frame hands back
// exactly the bytes that went and keeps its rest, and the recorded frames split into what the
// peer acknowledged and what is in doubt.
#include "runtime/tcp/frame_outbox.hpp"

#include <gtest/gtest.h>

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
using Outbox = FrameOutbox<int>;

FrameBytes header_of(std::uint64_t message, const ByteRange& range, std::uint64_t total) {
  return encode_frame_header(
      FrameHeader{kFrameStriped, 42, 1, message, range.offset, range.length, total});
}

class FrameOutboxTest : public ::testing::Test {
 protected:
  // Small kernel buffers, so a peer that does not read stops the writer soon.
  void connect() { testing::connect_pair(io, writer, peer, /*small_buffers=*/true); }

  // Writes the queue's frames one after another until it is empty (at most 10 s); every frame
  // must leave whole.
  void write_all() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!outbox.idle() && std::chrono::steady_clock::now() < until) {
      outbox.write_next(writer, [this](const asio::error_code& error, std::size_t bytes) {
        ASSERT_FALSE(error) << error.message();
        bool too_late = false;
        const Outbox::Frame frame = outbox.wrote_front(bytes, too_late);
        sent.push_back(frame.message);
        EXPECT_FALSE(too_late);
      });
      io.restart();
      io.run_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(outbox.idle());
  }

  std::vector<std::byte> read_exactly(std::size_t size) {
    std::vector<std::byte> bytes(size);
    asio::read(peer, asio::buffer(bytes));
    return bytes;
  }

  asio::io_context io;
  asio::ip::tcp::socket writer{io};
  asio::ip::tcp::socket peer{io};
  Outbox outbox;
  std::vector<int> sent;  // the messages of the frames that left, in order
};

TEST_F(FrameOutboxTest, FramesLeaveInQueueOrderByteExact) {
  connect();
  const auto first = pattern(100'000, 1);
  const auto second = pattern(7, 2);
  const FrameBytes first_header = header_of(1, {0, first.size()}, first.size());
  const FrameBytes second_header = header_of(2, {0, second.size()}, second.size());
  // An owned frame holds its header and payload together.
  const std::vector<std::byte> owned = joined(header_of(3, {5, 3}, 8), pattern(3, 3));
  outbox.push({.header = first_header, .payload = first, .range = {0, first.size()}, .message = 1});
  outbox.push(
      {.header = second_header, .payload = second, .range = {0, second.size()}, .message = 2});
  outbox.push({.range = {5, 3}, .message = 3, .owned = owned});
  std::vector<std::byte> expected = joined(first_header, first);
  const auto second_frame = joined(second_header, second);
  expected.insert(expected.end(), second_frame.begin(), second_frame.end());
  expected.insert(expected.end(), owned.begin(), owned.end());
  std::vector<std::byte> received;
  std::thread reader([&] { received = read_exactly(expected.size()); });
  write_all();
  reader.join();
  EXPECT_EQ(received, expected);
  EXPECT_EQ(sent, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(outbox.handed(), expected.size());
}

// The peer does not read, so a 16 MiB frame's write waits; interrupted, it hands back the exact
// parts of its range that went and did not, and the rest it keeps completes the frame: the peer
// reads the whole frame once.
TEST_F(FrameOutboxTest, AnInterruptedFrameKeepsItsRestAndReportsExactRanges) {
  connect();
  const auto payload = pattern(16 << 20, 4);
  const ByteRange range{1000, payload.size()};
  const FrameBytes header = header_of(9, range, range.offset + range.length);
  outbox.push({.header = header, .payload = payload, .range = range, .message = 9});
  std::optional<std::size_t> stopped_after;
  outbox.write_next(writer, [&](const asio::error_code& error, std::size_t bytes) {
    EXPECT_EQ(error, asio::error::operation_aborted);
    stopped_after = bytes;
  });
  io.run_for(std::chrono::milliseconds(200));
  ASSERT_FALSE(stopped_after) << "the whole frame went although the peer read nothing";
  EXPECT_TRUE(outbox.writes_borrowed());
  outbox.interrupt();
  EXPECT_TRUE(outbox.interrupting());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!stopped_after && std::chrono::steady_clock::now() < until) {
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(stopped_after);
  ASSERT_GT(*stopped_after, header.size());

  const Outbox::Interrupted parts = outbox.interrupted(*stopped_after);
  const std::size_t payload_written = *stopped_after - header.size();
  EXPECT_EQ(parts.message, 9);
  EXPECT_EQ(parts.written, (ByteRange{range.offset, payload_written}));
  EXPECT_EQ(parts.unwritten,
            (ByteRange{range.offset + payload_written, range.length - payload_written}));
  EXPECT_FALSE(outbox.interrupting());
  ASSERT_FALSE(outbox.empty());
  EXPECT_TRUE(outbox.front().rest);
  EXPECT_FALSE(outbox.front().borrows()) << "the rest must not borrow the caller's message";
  EXPECT_EQ(outbox.front().owned.size(), header.size() + payload.size() - *stopped_after);

  std::vector<std::byte> received;
  std::thread reader([&] { received = read_exactly(header.size() + payload.size()); });
  write_all();
  reader.join();
  EXPECT_EQ(received, joined(header, payload));
  EXPECT_EQ(outbox.handed(), header.size() + payload.size());
}

// Recorded frames against the kernel's count of unacknowledged bytes: the acknowledged ones are
// forgotten, and the doubt of the rest is exactly the payload bytes after the acknowledged end.
TEST(FrameOutboxRecords, DoubtIsThePayloadAfterTheAcknowledgedEnd) {
  Outbox outbox;
  outbox.wrote_directly(kFrameHeaderSize + 40);
  outbox.record({0, 40}, 1);  // ends at 104 of the stream's bytes
  outbox.wrote_directly(kFrameHeaderSize + 60);
  outbox.record({40, 60}, 1);  // ends at 228
  outbox.wrote_directly(kFrameHeaderSize + 10);
  outbox.record({0, 10}, 2);  // another message's, ends at 302
  ASSERT_EQ(outbox.handed(), 302u);
  EXPECT_TRUE(outbox.holds([](const Outbox::Written& w) { return w.message == 2; }));

  // 120 bytes unacknowledged: the peer has the first 182: frame 1 of message 1, and the first
  // of its second frame's payload (which begins at 168): 14 bytes.
  std::vector<ByteRange> acknowledged_frames;
  outbox.forget_acknowledged(
      120, [](const Outbox::Written&) { return false; },
      [&](const Outbox::Written& w) { acknowledged_frames.push_back(w.range); });
  EXPECT_EQ(acknowledged_frames, (std::vector<ByteRange>{{0, 40}}));
  ASSERT_EQ(outbox.recorded().size(), 2u);

  std::vector<ByteRange> has;
  const ByteRanges doubt = outbox.take_doubt(
      120, [](const Outbox::Written& w) { return w.message == 1; },
      [&](const ByteRange& part) { has.push_back(part); });
  EXPECT_EQ(doubt.ranges(), (std::vector<ByteRange>{{54, 46}}));
  EXPECT_EQ(has, (std::vector<ByteRange>{{40, 14}}));
  ASSERT_EQ(outbox.recorded().size(), 1u) << "message 2's frame stays";
  EXPECT_EQ(outbox.recorded().front().message, 2);

  outbox.forget([](const Outbox::Written& w) { return w.message == 2; });
  EXPECT_TRUE(outbox.recorded().empty());
  outbox.record({0, 0}, 3);
  EXPECT_TRUE(outbox.recorded().empty()) << "an empty range is nothing to doubt";
}

}  // namespace
}  // namespace multilane::runtime
