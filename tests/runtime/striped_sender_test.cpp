// tests/runtime/striped_sender_test.cpp — the one striped sender of the engine and StreamSet,
// over loopback connections whose acknowledgements the test states (a fake progress probe):
// messages leave in order on every stream, byte-exact; a stalled stream's share in the end game
// goes again on the other stream, marked re-sent, so that the other stream alone carries every
// byte; a re-send of bytes the peer already has is harmless (the same bytes at the same
// offsets); a kept tail re-sends from its copy after the caller reused its buffer, and settles
// only once every copy is acknowledged; links that adapt share their streams among the
// destinations in flight at once (the crowd), and the others do not.
#include "runtime/tcp/striped_sender.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "runtime/loopback.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;
using testing::pattern;

constexpr std::uint64_t kJob = 42;

struct TestStream final : StripeStream {
  explicit TestStream(asio::io_context& io) : socket(io) {}
  int fd() override { return socket.is_open() ? socket.native_handle() : -1; }
  bool open() const override { return socket.is_open(); }
  asio::ip::tcp::socket socket;
};

// A frame as the peer read it.
struct ReadFrame {
  FrameHeader header;
  std::vector<std::byte> payload;
};

class StripedSenderTest : public ::testing::Test {
 protected:
  static constexpr int kStreams = 2;

  StripedSenderTest()
      : link(kStreams, /*adapts=*/false),
        sender([this](StripeStream& s) { pump(static_cast<TestStream&>(s)); },
               [this](int fd) { return progress_of(fd); }) {
    for (int i = 0; i < kStreams; ++i) {
      streams.push_back(std::make_unique<TestStream>(io));
      peers.emplace_back(io);
      testing::connect_pair(io, streams[i]->socket, peers[i], /*small_buffers=*/false);
      streams[i]->link = &link;
      streams[i]->index = i;
      link.streams.push_back(streams[i].get());
    }
  }

  void pump(TestStream& s) {
    if (s.out.writing()) return;
    if (s.out.empty() && !sender.take_piece(s)) return;
    s.out.write_next(s.socket, [this, &s](const asio::error_code& error, std::size_t bytes) {
      if (error == asio::error::operation_aborted && s.out.interrupting()) {
        return sender.interrupted(s, bytes);
      }
      ASSERT_FALSE(error) << error.message();
      if (const auto message = sender.written(s, bytes)) sent.push_back(message);
      pump(s);
    });
  }

  // Stream i's figures as the test states them: everything written is acknowledged, unless the
  // stream is held (nothing acknowledged past what it had when it was held).
  StreamProgress progress_of(int fd) {
    for (int i = 0; i < kStreams; ++i) {
      if (streams[i]->socket.native_handle() != fd) continue;
      const std::uint64_t handed = streams[i]->out.handed();
      if (!held[i]) return {.acknowledged = handed, .unacknowledged = 0};
      return {.acknowledged = held_at[i], .unacknowledged = handed - held_at[i]};
    }
    return {};
  }
  void hold(int i) {
    held[i] = true;
    held_at[i] = streams[i]->out.handed();
  }

  std::shared_ptr<StripedMessage> split(std::uint64_t id, std::span<const std::byte> bytes,
                                        std::uint64_t piece, bool resends) {
    auto message = std::make_shared<StripedMessage>();
    message->header = {
        .flags = kFrameStriped, .job_id = kJob, .message_id = id, .total = bytes.size()};
    message->bytes = bytes;
    message->links = {&link};
    message->streams = link.streams;
    sender.start_split(message, ChunkFeed(bytes.size(), kStreams, piece, piece), resends);
    return message;
  }

  void run() {
    io.restart();
    io.run_for(5s);
  }

  // Every frame that reached peer i, in order (reads what is there, waiting at most 5 s for each
  // announced payload).
  std::vector<ReadFrame> frames_at(int i) {
    std::vector<ReadFrame> frames;
    asio::ip::tcp::socket& peer = peers[i];
    peer.non_blocking(true);
    for (;;) {
      FrameBytes head;
      asio::error_code error;
      const std::size_t got = peer.read_some(asio::buffer(head), error);
      if (error == asio::error::would_block) break;
      EXPECT_FALSE(error) << error.message();
      if (error) break;
      peer.non_blocking(false);
      asio::read(peer, asio::buffer(head.data() + got, head.size() - got));
      const FrameDecode decoded = decode_frame_header(head, {.job_id = kJob}, "test peer");
      EXPECT_TRUE(decoded.header) << decoded.error;
      if (!decoded.header) break;
      ReadFrame frame{.header = *decoded.header,
                      .payload = std::vector<std::byte>(decoded.header->length)};
      asio::read(peer, asio::buffer(frame.payload));
      frames.push_back(std::move(frame));
      peer.non_blocking(true);
    }
    return frames;
  }

  asio::io_context io;
  std::vector<std::unique_ptr<TestStream>> streams;
  std::vector<asio::ip::tcp::socket> peers;
  StripeLink link;
  StripedSender sender;
  std::vector<std::shared_ptr<StripedMessage>> sent;
  bool held[kStreams] = {false, false};
  std::uint64_t held_at[kStreams] = {0, 0};
};

// Places every frame's payload of message `id` into a buffer of `size` bytes; `covered` counts
// the bytes each offset received.
std::vector<std::byte> assemble(const std::vector<ReadFrame>& frames, std::uint64_t id,
                                std::uint64_t size, std::vector<int>& covered) {
  std::vector<std::byte> bytes(size);
  covered.assign(size, 0);
  for (const ReadFrame& f : frames) {
    if (f.header.message_id != id) continue;
    for (std::uint64_t i = 0; i < f.header.length; ++i) {
      bytes[f.header.offset + i] = f.payload[i];
      ++covered[f.header.offset + i];
    }
  }
  return bytes;
}

TEST_F(StripedSenderTest, TheOldestMessageGoesFirstOnEveryStreamAndEveryByteArrivesOnce) {
  const auto first = pattern(300 * 1024, 1);
  const auto second = pattern(200 * 1024, 2);
  split(7, first, 16 * 1024, /*resends=*/false);
  split(8, second, 16 * 1024, /*resends=*/false);
  run();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0]->header.message_id, 7u);
  EXPECT_EQ(sent[1]->header.message_id, 8u);
  std::vector<ReadFrame> all;
  for (int i = 0; i < kStreams; ++i) {
    const auto frames = frames_at(i);
    bool second_began = false;
    for (const ReadFrame& f : frames) {
      if (f.header.message_id == 8) second_began = true;
      EXPECT_FALSE(second_began && f.header.message_id == 7)
          << "stream " << i << " wrote a piece of message 7 after one of message 8";
      EXPECT_EQ(f.header.flags, kFrameStriped);
    }
    all.insert(all.end(), frames.begin(), frames.end());
  }
  std::vector<int> covered;
  EXPECT_EQ(assemble(all, 7, first.size(), covered), first);
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), static_cast<long>(first.size()));
  EXPECT_EQ(assemble(all, 8, second.size(), covered), second);
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), static_cast<long>(second.size()));
  EXPECT_EQ(sender.counters().stalls, 0u);
}

TEST_F(StripedSenderTest, AStalledStreamsShareGoesAgainOnTheOtherStreamMarkedResent) {
  const auto bytes = pattern(256 * 1024, 3);
  const auto message = split(1, bytes, 16 * 1024, /*resends=*/true);
  run();  // every piece written; stream 0's now in doubt
  hold(0);
  held_at[0] = 0;  // nothing stream 0 wrote was acknowledged
  const auto now = Clock::now();
  const StallPatience patience{.floor = 20ms, .round_trips = 4};
  sender.look_at(link, now, patience, patience);
  EXPECT_FALSE(streams[0]->stalled);
  EXPECT_FALSE(sender.delivered(*message));
  sender.look_at(link, now + 30ms, patience, patience);
  EXPECT_TRUE(streams[0]->stalled);
  run();
  // Stream 1 alone now carried every byte: its own pieces, and stream 0's again, re-sent.
  const auto frames = frames_at(1);
  std::vector<int> covered;
  EXPECT_EQ(assemble(frames, 1, bytes.size(), covered), bytes);
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 0), 0);
  std::uint64_t resent = 0;
  for (const ReadFrame& f : frames) {
    if (f.header.flags & kFrameResent) resent += f.header.length;
  }
  const auto stalled_frames = frames_at(0);
  std::uint64_t stream0_bytes = 0;
  for (const ReadFrame& f : stalled_frames) stream0_bytes += f.header.length;
  EXPECT_GT(stream0_bytes, 0u);
  EXPECT_EQ(resent, stream0_bytes);
  EXPECT_EQ(sender.counters().resent_bytes, stream0_bytes);
  EXPECT_EQ(sender.counters().stalls, 1u);
  // Stream 0 holds nothing of it any more, and stream 1's copies are acknowledged.
  sender.look_at(link, now + 40ms, patience, patience);
  EXPECT_TRUE(sender.delivered(*message));
}

TEST_F(StripedSenderTest, AKeptTailGoesAgainFromItsCopyAfterTheCallerReusedItsBuffer) {
  auto bytes = pattern(256 * 1024, 4);
  const auto original = bytes;
  hold(0);  // stream 0 is acknowledged nothing from now on
  const auto message = split(2, bytes, 16 * 1024, /*resends=*/true);
  run();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sender.keep_tail(*message));
  EXPECT_TRUE(message->bytes.empty());
  std::fill(bytes.begin(), bytes.end(), std::byte{0xee});  // the caller's next use
  EXPECT_TRUE(sender.settled_tails().empty());
  const auto now = Clock::now();
  const StallPatience patience{.floor = 20ms, .round_trips = 4};
  sender.look_at(link, now, patience, patience);
  sender.look_at(link, now + 30ms, patience, patience);
  run();
  const auto frames = frames_at(1);
  std::vector<int> covered;
  EXPECT_EQ(assemble(frames, 2, original.size(), covered), original);
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 0), 0);
  sender.look_at(link, now + 40ms, patience, patience);
  const auto settled = sender.settled_tails();
  ASSERT_EQ(settled.size(), 1u);
  EXPECT_EQ(settled[0], message);
  sender.forget(message);
  EXPECT_TRUE(sender.messages().empty());
}

TEST_F(StripedSenderTest, OnlyTheStreamsInUseTakePiecesAndStalledOnesOnlyWhenAllAreStalled) {
  EXPECT_TRUE(sender.takes_pieces(*streams[0]));
  EXPECT_TRUE(sender.takes_pieces(*streams[1]));
  streams[0]->stalled = true;
  EXPECT_FALSE(sender.takes_pieces(*streams[0]));
  EXPECT_TRUE(sender.takes_pieces(*streams[1]));
  streams[1]->stalled = true;
  EXPECT_TRUE(sender.takes_pieces(*streams[0]));
  EXPECT_TRUE(sender.takes_pieces(*streams[1]));
}

// A stream that is always open, for what takes pieces (no socket: the pump does nothing).
struct OpenStream final : StripeStream {
  int fd() override { return -1; }
  bool open() const override { return true; }
};

// Links to `destinations` peers with two lanes each, four streams a lane; WAN links adapt.
class CrowdTest : public ::testing::Test {
 protected:
  static constexpr int kStreamsPerLane = 4;

  CrowdTest() : sender([](StripeStream&) {}, [](int) { return StreamProgress{}; }) {}

  StripeLink& add_link(int destination, bool adapts) {
    auto& link = *links.emplace_back(std::make_unique<StripeLink>(kStreamsPerLane, adapts));
    link.destination = destination;
    for (int i = 0; i < kStreamsPerLane; ++i) {
      auto& stream = *owned.emplace_back(std::make_unique<OpenStream>());
      stream.link = &link;
      stream.index = i;
      link.streams.push_back(&stream);
    }
    return link;
  }
  std::shared_ptr<StripedMessage> split_over(std::vector<StripeLink*> over) {
    auto message = std::make_shared<StripedMessage>();
    message->header = {.flags = kFrameStriped, .job_id = kJob, .total = 1 << 20};
    message->links = over;
    for (StripeLink* link : over) {
      message->streams.insert(message->streams.end(), link->streams.begin(), link->streams.end());
    }
    sender.start_split(message, ChunkFeed(1 << 20, 8, 1 << 16, 1 << 16), /*resends=*/false);
    return message;
  }
  int taking(const StripeLink& link) const {
    return static_cast<int>(
        std::count_if(link.streams.begin(), link.streams.end(),
                      [&](const StripeStream* s) { return sender.takes_pieces(*s); }));
  }

  std::vector<std::unique_ptr<StripeLink>> links;
  std::vector<std::unique_ptr<OpenStream>> owned;
  StripedSender sender;
};

TEST_F(CrowdTest, DestinationsInFlightAtOnceShareTheStreamsOfTheLinksThatAdapt) {
  StripeLink& a0 = add_link(1, true);
  StripeLink& a1 = add_link(1, true);
  StripeLink& b0 = add_link(2, true);
  StripeLink& c0 = add_link(3, true);
  StripeLink& d0 = add_link(4, true);
  StripeLink& b1 = add_link(2, true);

  // One destination over both lanes is one member of the crowd: every stream of both lanes.
  const auto to_a = split_over({&a0, &a1});
  EXPECT_EQ(sender.crowd(), 1);
  EXPECT_EQ(taking(a0), 4);
  EXPECT_EQ(taking(a1), 4);
  // Two destinations: half the streams of each link, the first ones.
  const auto to_b = split_over({&b0, &b1});
  EXPECT_EQ(sender.crowd(), 2);
  EXPECT_EQ(taking(a0), 2);
  EXPECT_EQ(taking(b1), 2);
  EXPECT_TRUE(sender.takes_pieces(*a0.streams[1]));
  EXPECT_FALSE(sender.takes_pieces(*a0.streams[2]));
  // A second message to a destination already in flight does not grow the crowd.
  const auto to_b_again = split_over({&b0});
  EXPECT_EQ(sender.crowd(), 2);
  // Four destinations and more: one stream each, never none.
  const auto to_c = split_over({&c0});
  const auto to_d = split_over({&d0});
  EXPECT_EQ(sender.crowd(), 4);
  EXPECT_EQ(taking(a0), 1);
  EXPECT_EQ(taking(d0), 1);
  // Destinations leave the crowd with their last message.
  sender.forget(to_b);
  EXPECT_EQ(sender.crowd(), 4);
  sender.forget(to_b_again);
  sender.forget(to_c);
  sender.forget(to_d);
  EXPECT_EQ(sender.crowd(), 1);
  EXPECT_EQ(taking(a0), 4);
  sender.forget(to_a);
  EXPECT_EQ(sender.crowd(), 0);
}

TEST_F(CrowdTest, LinksThatDoNotAdaptNeitherJoinNorYieldToTheCrowd) {
  StripeLink& wan_a = add_link(1, true);
  StripeLink& wan_b = add_link(2, true);
  StripeLink& lan = add_link(3, false);
  const auto to_a = split_over({&wan_a});
  const auto to_b = split_over({&wan_b});
  const auto on_lan = split_over({&lan});
  EXPECT_EQ(sender.crowd(), 2);
  EXPECT_EQ(taking(lan), 4);
  EXPECT_EQ(taking(wan_a), 2);
}

}  // namespace
}  // namespace multilane::runtime
