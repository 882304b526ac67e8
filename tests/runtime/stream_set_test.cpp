// tests/runtime/stream_set_test.cpp — striped transfers over 1..16 loopback streams, chunks
// out of order, chunks sent twice, a stalled stream's share re-sent on the others, a peer
// closing mid-message, a silent peer, and listener/connector errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <thread>

#include "loopback.hpp"
#include "pausing_proxy.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using namespace std::chrono_literals;

class Transfer : public ::testing::TestWithParam<int> {};

// A receiver and a sender whose streams go through a PausingProxy of `proxy_buffer` bytes;
// the sender learns its streams' progress from the proxy (what a stalled path would show),
// passed through `adjust`.
struct ThroughProxy {
  ThroughProxy(const StreamOptions& options, StreamOptions sender_options, int proxy_buffer,
               std::function<StreamProgress(StreamProgress)> adjust = {})
      : listener(testing::loopback(0), options), proxy(listener.port(), proxy_buffer) {
    sender_options.progress_probe = [this, adjust](int fd) {
      return adjust ? adjust(proxy.progress(fd)) : proxy.progress(fd);
    };
    auto connecting = testing::in_background(
        [&] { return testing::connect_in_order(testing::loopback(proxy.port()), sender_options); });
    receiver.emplace(listener.accept());
    sender.emplace(connecting.get());
  }
  StreamListener listener;
  testing::PausingProxy proxy;
  std::optional<StreamSet> receiver;
  std::optional<StreamSet> sender;
};

TEST_P(Transfer, OddSizesArriveByteExact) {
  auto [receiver, sender] = testing::connected_sets(testing::test_options(GetParam()));
  EXPECT_EQ(receiver.streams(), GetParam());
  for (std::size_t size : {0ul, 1ul, 4097ul, 1024ul * 1024 + 3, 40'000ul}) {
    const auto message = testing::pattern(size, static_cast<unsigned>(size));
    std::vector<std::byte> buffer(size, std::byte{0xee});
    auto send = testing::in_background([&] { sender.send(message, 5); });
    receiver.recv(buffer, 5);
    send.get();
    EXPECT_TRUE(buffer == message) << size << " bytes over " << GetParam() << " streams";
  }
}

INSTANTIATE_TEST_SUITE_P(Streams, Transfer, ::testing::Values(1, 4, 16));

TEST(StreamSet, ManySmallChunksPerStreamAndBothDirectionsAtOnce) {
  StreamOptions options = testing::test_options(3);
  options.stripe = {1000, 777};
  options.send_buffer = 64 * 1024;
  options.receive_buffer = 64 * 1024;
  auto [a, b] = testing::connected_sets(options);
  const auto to_b = testing::pattern(300'001, 1);
  const auto to_a = testing::pattern(200'003, 2);
  std::vector<std::byte> at_a(to_a.size()), at_b(to_b.size());
  auto other = testing::in_background([&] { b.send_recv(to_a, at_b); });
  a.send_recv(to_b, at_a);
  other.get();
  EXPECT_TRUE(at_a == to_a);
  EXPECT_TRUE(at_b == to_b);
}

TEST(StreamSet, BackToBackMessagesKeepTheirOrder) {
  auto [receiver, sender] = testing::connected_sets(testing::test_options(4));
  const std::vector<std::size_t> sizes{100'000, 5, 0, 70'000, 33'000, 1};
  auto send = testing::in_background([&] {
    for (std::size_t size : sizes) sender.send(testing::pattern(size, static_cast<unsigned>(size)));
  });
  for (std::size_t size : sizes) {
    std::vector<std::byte> buffer(size);
    receiver.recv(buffer);
    EXPECT_TRUE(buffer == testing::pattern(size, static_cast<unsigned>(size))) << size;
  }
  send.get();
}

TEST(StreamSet, WrongBufferSizeIsAnError) {
  auto [receiver, sender] = testing::connected_sets(testing::test_options(1));
  auto send = testing::in_background([&] { sender.send(testing::pattern(10)); });
  std::vector<std::byte> buffer(11);
  EXPECT_THAT([&] { receiver.recv(buffer); },
              ::testing::ThrowsMessage<TransportError>(HasSubstr("message 0 from 127.0.0.1:")));
  send.get();
  EXPECT_THROW(receiver.recv(buffer), TransportError) << "a failed set stays closed";
}

// A hand-driven peer: K authenticated raw sockets that write frames as a test dictates.
class RawPeer {
 public:
  explicit RawPeer(const StreamOptions& options, std::uint16_t port) : options_(options) {
    for (int i = 0; i < options.streams; ++i) {
      sockets_.emplace_back(io_).connect(testing::loopback(port));
      authenticate(io_, sockets_.back(), Role::Connector,
                   HandshakeConfig{options.job_id, options.secret, options.timeout});
    }
  }
  void write_chunk(int stream, const std::vector<std::byte>& message, std::uint64_t offset,
                   std::uint64_t length, std::uint64_t message_id = 0) {
    const FrameBytes header = encode_frame_header(
        FrameHeader{kFrameStriped, options_.job_id, 0, message_id, offset, length, message.size()});
    auto& socket = sockets_[static_cast<std::size_t>(stream)];
    asio::write(socket, asio::buffer(header));
    asio::write(socket, asio::buffer(message.data() + offset, length));
  }
  void write_raw(int stream, const std::vector<std::byte>& bytes) {
    asio::write(sockets_[static_cast<std::size_t>(stream)], asio::buffer(bytes));
  }
  void close() {
    for (auto& s : sockets_) s.close();
  }

 private:
  StreamOptions options_;
  asio::io_context io_;
  std::vector<asio::ip::tcp::socket> sockets_;
};

// Accepts a stream set while `script` drives a raw peer on another thread; `script` returns
// when told to by `release` (so a silent peer stays connected until the test is done). The
// peer is waited for when the scenario is destroyed: whatever the script refers to must be
// declared before the scenario, since the receiver may complete while the script's last write
// is still returning.
struct RawScenario {
  explicit RawScenario(const StreamOptions& o) : options(o) {}
  StreamOptions options;
  StreamListener listener{testing::loopback(0), options};
  std::promise<void> release;
  std::future<void> peer;  // declared last: waited for first

  template <typename Script>
  StreamSet start(Script script) {
    peer = testing::in_background([this, script, released = release.get_future()] {
      RawPeer raw(options, listener.port());
      script(raw);
      released.wait_for(10s);
    });
    return listener.accept();
  }
  ~RawScenario() {
    release.set_value();
    if (peer.valid()) peer.wait();
  }
};

TEST(StreamSet, ChunksOutOfOrderAcrossStreamsLandRight) {
  const auto message = testing::pattern(100'000);  // outlives the peer's script
  RawScenario scenario{testing::test_options(2)};
  StreamSet receiver = scenario.start([&](RawPeer& raw) {
    raw.write_chunk(1, message, 75'000, 25'000);  // the end first, on the second stream
    raw.write_chunk(1, message, 50'000, 25'000);
    std::this_thread::sleep_for(50ms);
    raw.write_chunk(0, message, 25'000, 25'000);
    raw.write_chunk(0, message, 0, 25'000);
  });
  std::vector<std::byte> buffer(message.size());
  receiver.recv(buffer);
  EXPECT_TRUE(buffer == message);
}

// Receives one message of each size in turn; every buffer stays as received until all
// arrived, so a late write into an earlier one shows.
std::vector<std::vector<std::byte>> receive_in_turn(StreamSet& receiver,
                                                    const std::vector<std::size_t>& sizes) {
  std::vector<std::vector<std::byte>> got;
  for (std::size_t size : sizes) receiver.recv(got.emplace_back(size));
  return got;
}

TEST(StreamSet, ChunksSentTwiceAndLateCopiesAreDropped) {
  const auto first = testing::pattern(100'000, 1);  // both outlive the peer's script
  const auto second = testing::pattern(30'000, 2);
  RawScenario scenario{testing::test_options(2)};
  StreamSet receiver = scenario.start([&](RawPeer& raw) {
    raw.write_chunk(0, first, 0, 60'000);
    raw.write_chunk(1, first, 40'000, 60'000);  // overlaps the first chunk by 20,000 bytes
    std::this_thread::sleep_for(50ms);          // message 0 is complete before the late copy
    raw.write_chunk(1, first, 10'000, 50'000);  // re-sent bytes of message 0: dropped
    raw.write_chunk(1, second, 0, 30'000, 1);
    raw.write_chunk(0, second, 20'000, 10'000, 1);  // and a copy of message 1's end
  });
  const auto got = receive_in_turn(receiver, {first.size(), second.size()});
  EXPECT_TRUE(got[0] == first) << "nothing wrote into message 0's buffer after it was complete";
  EXPECT_TRUE(got[1] == second);
}

TEST(StreamSet, FramesOfTheNextMessageDoNotHoldUpCopiesBehindThem) {
  // A sender that moved on to message 1 sends a copy of message 0's last bytes behind message
  // 1's frame on the same stream: the receiver reads message 1's frame ahead and finds them.
  const auto first = testing::pattern(100'000, 1);  // both outlive the peer's script
  const auto second = testing::pattern(40'000, 2);
  RawScenario scenario{testing::test_options(2)};
  StreamSet receiver = scenario.start([&](RawPeer& raw) {
    raw.write_chunk(0, first, 0, 50'000);
    raw.write_chunk(1, second, 0, 25'000, 1);
    raw.write_chunk(1, first, 50'000, 50'000);  // the copy, behind message 1's frame
    raw.write_chunk(1, second, 25'000, 15'000, 1);
  });
  const auto got = receive_in_turn(receiver, {first.size(), second.size()});
  EXPECT_TRUE(got[0] == first);
  EXPECT_TRUE(got[1] == second);
}

TEST(StreamSet, ASendReturnsWithItsUnacknowledgedEndKeptAndCopiedOnAStall) {
  // Stream 0 goes through a proxy that holds it. A message small enough for every stream to
  // write its pieces at once is handed out before stream 0's pieces are acknowledged: send()
  // returns, the caller overwrites the message, and the pieces stream 0 holds still reach the
  // receiver intact, copied from what the set kept, while the next message is on its way.
  StreamOptions options = testing::test_options(4);
  options.stripe = {1024, 16 * 1024};
  options.send_buffer = 256 * 1024;
  options.receive_buffer = 256 * 1024;
  options.resend_stalled = true;
  options.tail_round_trip = std::chrono::microseconds(0);  // loopback counts as a long path
  ThroughProxy pair(options, options, 256 * 1024);
  StreamSet& receiver = *pair.receiver;
  StreamSet& sender = *pair.sender;
  testing::PausingProxy& proxy = pair.proxy;

  proxy.pause(0);
  const std::uint64_t before = proxy.forwarded(0);
  const auto first = testing::pattern(96 * 1024 + 7, 5);
  const auto second = testing::pattern(200'001, 6);
  auto sending = testing::in_background([&] {
    std::vector<std::byte> message = first;
    sender.send(message);
    std::fill(message.begin(), message.end(), std::byte{0xee});  // the caller's to reuse
    sender.send(second);
  });
  std::vector<std::byte> got_first(first.size()), got_second(second.size());
  receiver.recv(got_first);
  receiver.recv(got_second);
  sending.get();
  EXPECT_TRUE(got_first == first);
  EXPECT_TRUE(got_second == second);
  EXPECT_EQ(proxy.forwarded(0), before) << "the held stream carried none of it";
  EXPECT_GE(sender.send_counters().stalls, 1u);
  proxy.resume(0);
}

TEST(StreamSet, StalledStreamsShareGoesOutOnTheOthers) {
  // Four streams through a proxy that stops forwarding the first one: the messages arrive
  // whole anyway, and none of their bytes came through the stalled stream.
  StreamOptions options = testing::test_options(4);
  options.stripe = {1024, 128 * 1024};
  options.send_buffer = 64 * 1024;
  options.receive_buffer = 64 * 1024;
  StreamOptions sender_options = options;
  sender_options.resend_stalled = true;
  ThroughProxy pair(options, sender_options, 64 * 1024);
  StreamSet& receiver = *pair.receiver;
  StreamSet& sender = *pair.sender;
  testing::PausingProxy& proxy = pair.proxy;

  proxy.pause(0);
  const std::uint64_t before = proxy.forwarded(0);
  const std::vector<std::size_t> sizes{4 * 1024 * 1024 + 3, 2000, 700'001, 3 * 1024 * 1024};
  auto sending = testing::in_background([&] {
    for (std::size_t size : sizes) sender.send(testing::pattern(size, static_cast<unsigned>(size)));
  });
  for (std::size_t size : sizes) {
    std::vector<std::byte> buffer(size);
    receiver.recv(buffer);
    EXPECT_TRUE(buffer == testing::pattern(size, static_cast<unsigned>(size))) << size;
  }
  sending.get();
  EXPECT_EQ(proxy.forwarded(0), before) << "the stalled stream carried none of it";
  // The counters say so too: the held stream's share went out again, at least once.
  const SendCounters counters = sender.send_counters();
  EXPECT_EQ(counters.messages, sizes.size());
  EXPECT_EQ(counters.message_bytes, 4 * 1024 * 1024 + 3 + 2000 + 700'001 + 3 * 1024 * 1024);
  EXPECT_GE(counters.stalls, 1u);
  EXPECT_GT(counters.resent_bytes, 0u);
  EXPECT_LT(counters.resent_bytes, counters.message_bytes);

  // Once it moves again, its late copies are dropped and both directions go on byte-exact.
  proxy.resume(0);
  for (std::size_t size : {5 * 1024 * 1024 + 1, 64 * 1024}) {
    const auto there = testing::pattern(size, 3);
    const auto back = testing::pattern(size / 2, 4);
    std::vector<std::byte> at_receiver(there.size()), at_sender(back.size());
    auto other = testing::in_background([&] { receiver.send_recv(back, at_receiver); });
    sender.send_recv(there, at_sender);
    other.get();
    EXPECT_TRUE(at_receiver == there) << size;
    EXPECT_TRUE(at_sender == back) << size;
  }
}

// Sends `size` bytes over four streams, one of them held by a proxy until the other three
// carried all they could (no re-sending); checks the message arrives byte-exact and returns
// the bytes the held stream carried.
std::uint64_t carried_by_a_held_stream(std::size_t size, bool equal_shares) {
  StreamOptions options = testing::test_options(4);
  options.stripe = {1024, 1024 * 1024};
  options.send_buffer = 64 * 1024;
  options.receive_buffer = 64 * 1024;
  options.unsent_limit = 16 * 1024;
  options.equal_shares = equal_shares;
  StreamListener listener(testing::loopback(0), options);
  testing::PausingProxy proxy(listener.port(), 64 * 1024);
  auto connecting = testing::in_background(
      [&] { return testing::connect_in_order(testing::loopback(proxy.port()), options); });
  StreamSet receiver = listener.accept();
  StreamSet sender = connecting.get();

  proxy.pause(0);
  const auto message = testing::pattern(size, 9);
  auto sending = testing::in_background([&] { sender.send(message); });
  std::vector<std::byte> buffer(size);
  auto receiving = testing::in_background([&] { receiver.recv(buffer); });
  const auto others = [&] { return proxy.forwarded(1) + proxy.forwarded(2) + proxy.forwarded(3); };
  const auto deadline = std::chrono::steady_clock::now() + 8s;
  std::uint64_t last = 0;
  do {
    last = others();
    std::this_thread::sleep_for(100ms);
  } while (others() != last && std::chrono::steady_clock::now() < deadline);
  const std::uint64_t held_back = proxy.forwarded(0);
  proxy.resume(0);
  sending.get();
  receiving.get();
  EXPECT_TRUE(buffer == message);
  return proxy.forwarded_when_settled(0) - held_back;
}

TEST(StreamSet, ASlowStreamCarriesOnlyWhatItTook) {
  // The other three streams take piece after piece, so the held stream carries only what it
  // had taken when it stopped (its piece, what fits in the buffers on the way), not a quarter.
  const std::size_t size = 8 * 1024 * 1024 + 5;
  EXPECT_LT(carried_by_a_held_stream(size, false), size / 16);
  // Cut into equal shares up front (as MPWide does), it carries its quarter.
  EXPECT_GE(carried_by_a_held_stream(size, true), size / 4);
}

// Eight streams, the first held by a proxy during a first message and let go before a
// second; returns the bytes streams 5-7 carried of the second message and checks that both
// arrive byte-exact and what the counters say of the streams in use.
std::uint64_t carried_by_the_last_three_after_a_stall(bool adapt, std::uint64_t pacing = 0) {
  StreamOptions options = testing::test_options(8);
  options.stripe = {1024, 64 * 1024};
  options.send_buffer = 64 * 1024;
  options.receive_buffer = 64 * 1024;
  options.unsent_limit = 16 * 1024;
  StreamOptions sender_options = options;
  sender_options.resend_stalled = true;
  sender_options.adapt_streams = adapt;
  sender_options.pacing_rate = pacing;
  const bool governed = adapt && pacing == 0;
  // Only the held stream may count as stalled, also on a busy machine.
  sender_options.stall_patience = {std::chrono::milliseconds(300), 4};
  sender_options.endgame_patience = {std::chrono::milliseconds(300), 4};
  ThroughProxy pair(options, sender_options, 64 * 1024, [](StreamProgress progress) {
    progress.send_window = 0;  // no floor from loopback's rate (StreamGovernor's tests have it)
    return progress;
  });
  StreamSet& receiver = *pair.receiver;
  StreamSet& sender = *pair.sender;
  testing::PausingProxy& proxy = pair.proxy;
  const auto last_three = [&] {
    return proxy.forwarded_when_settled(5) + proxy.forwarded_when_settled(6) +
           proxy.forwarded_when_settled(7);
  };

  proxy.pause(0);
  const auto first = testing::pattern(4 * 1024 * 1024 + 1, 21);
  auto sending = testing::in_background([&] { sender.send(first); });
  std::vector<std::byte> got_first(first.size());
  receiver.recv(got_first);
  sending.get();
  EXPECT_TRUE(got_first == first);
  EXPECT_GE(sender.send_counters().stalls, 1u);
  EXPECT_EQ(sender.send_counters().streams_in_use, governed ? 4 : 8);

  proxy.resume(0);
  const std::uint64_t before = last_three();
  const auto second = testing::pattern(2 * 1024 * 1024 + 3, 22);
  sending = testing::in_background([&] { sender.send(second); });
  std::vector<std::byte> got_second(second.size());
  receiver.recv(got_second);
  sending.get();
  EXPECT_TRUE(got_second == second);
  EXPECT_EQ(sender.send_counters().streams_in_use, governed ? 5 : 8);  // no stall: one more
  return last_three() - before;
}

TEST(StreamSet, AStallHalvesTheStreamsThatTakePieces) {
  // The stall halves the streams in use (stream_governor.hpp): the next message goes over
  // four streams, none of it over the last three. Without adapting, or with paced streams, all
  // eight take pieces.
  EXPECT_EQ(carried_by_the_last_three_after_a_stall(true), 0u);
  EXPECT_GT(carried_by_the_last_three_after_a_stall(false), 0u);
  // Paced streams are each paced to their share of the path: all eight stay in use.
  EXPECT_GT(carried_by_the_last_three_after_a_stall(true, 1'000'000'000), 0u);
}

TEST(StreamSet, AtMostTheCrowdLimitOfStreamsTakePieces) {
  // Of 20 streams on a path that needs few, only the first 16 carry a message
  // (StreamGovernor::kCrowdLimit); all 20 without adapting.
  for (const bool adapt : {true, false}) {
    StreamOptions options = testing::test_options(20);
    options.stripe = {1024, 64 * 1024};
    StreamOptions sender_options = options;
    sender_options.resend_stalled = true;
    sender_options.adapt_streams = adapt;
    // No stream may count as stalled, also on a busy machine.
    sender_options.stall_patience = {std::chrono::milliseconds(2000), 4};
    sender_options.endgame_patience = {std::chrono::milliseconds(2000), 4};
    ThroughProxy pair(options, sender_options, 64 * 1024, [](StreamProgress progress) {
      progress.send_window = 0;  // no floor from loopback's rate
      return progress;
    });
    const auto last_four = [&] {
      std::uint64_t bytes = 0;
      for (int stream = 16; stream < 20; ++stream) {
        bytes += pair.proxy.forwarded_when_settled(stream);
      }
      return bytes;
    };
    const std::uint64_t before = last_four();  // the handshake
    const auto message = testing::pattern(4 * 1024 * 1024 + 7, 23);
    for (int round = 0; round < 2; ++round) {
      auto sending = testing::in_background([&] { pair.sender->send(message); });
      std::vector<std::byte> got(message.size());
      pair.receiver->recv(got);
      sending.get();
      EXPECT_TRUE(got == message);
    }
    EXPECT_EQ(pair.sender->send_counters().streams_in_use, adapt ? 16 : 20);
    if (adapt) {
      EXPECT_EQ(last_four() - before, 0u);
    } else {
      EXPECT_GT(last_four() - before, 0u);
    }
  }
}

TEST(StreamSet, PeerClosingMidMessageIsNamed) {
  const auto message = testing::pattern(1000);  // outlives the peer's script
  RawScenario scenario{testing::test_options(1)};
  StreamSet receiver = scenario.start([&](RawPeer& raw) {
    const FrameBytes header =
        encode_frame_header(FrameHeader{0, scenario.options.job_id, 0, 0, 0, 1000, 1000});
    raw.write_raw(0, std::vector<std::byte>(header.begin(), header.end()));
    raw.write_raw(0, std::vector<std::byte>(message.begin(), message.begin() + 100));
    raw.close();
  });
  std::vector<std::byte> buffer(message.size());
  EXPECT_THAT([&] { receiver.recv(buffer); },
              ::testing::ThrowsMessage<TransportError>(
                  MatchesRegex("peer 127\\.0\\.0\\.1:[0-9]+ closed the connection during message 0 "
                               "\\(received 100 of 1000 bytes\\)")));
}

TEST(StreamSet, PeerClosingBeforeTheMessageIsNamed) {
  RawScenario scenario{testing::test_options(3)};
  StreamSet receiver = scenario.start([](RawPeer& raw) { raw.close(); });
  std::vector<std::byte> buffer(10);
  EXPECT_THAT([&] { receiver.recv(buffer); },
              ::testing::ThrowsMessage<TransportError>(
                  HasSubstr("closed the connection before message 0 was complete (received 0 "
                            "of 10 bytes)")));
}

TEST(StreamSet, SilentPeerTimesOutWithWhatWasAwaited) {
  StreamOptions options = testing::test_options(2);
  options.timeout = 200ms;
  RawScenario scenario{options};
  StreamSet receiver = scenario.start([](RawPeer&) {});
  std::vector<std::byte> buffer(1000);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT([&] { receiver.recv(buffer); },
              ::testing::ThrowsMessage<TransportError>(MatchesRegex(
                  "timed out after 0\\.2 s waiting for message 0 from 127\\.0\\.0\\.1:[0-9]+: "
                  "received 0 of 1000 bytes")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(StreamSet, BadFrameIsReported) {
  RawScenario scenario{testing::test_options(1)};
  StreamSet receiver = scenario.start([&](RawPeer& raw) {
    raw.write_raw(0, std::vector<std::byte>(kFrameHeaderSize, std::byte{0x55}));
  });
  std::vector<std::byte> buffer(10);
  EXPECT_THAT([&] { receiver.recv(buffer); },
              ::testing::ThrowsMessage<TransportError>(HasSubstr("bad magic 0x55555555")));
}

TEST(StreamSet, ListenerTimesOutWaitingForConnections) {
  StreamOptions options = testing::test_options(2);
  options.timeout = 150ms;
  StreamListener listener(testing::loopback(0), options);
  EXPECT_THAT([&] { listener.accept(); },
              ::testing::ThrowsMessage<TransportError>(
                  MatchesRegex("timed out after 0\\.15 s waiting for connection 1 of 2 on "
                               "127\\.0\\.0\\.1:[0-9]+")));
}

TEST(StreamSet, WrongSecretFailsToConnect) {
  StreamOptions good = testing::test_options(1);
  StreamOptions bad = good;
  bad.secret = JobSecret::from_text("other");
  StreamListener listener(testing::loopback(0), good);
  auto connector = testing::in_background([&] {
    EXPECT_THROW(connect_streams(testing::loopback(listener.port()), bad), TransportError);
  });
  EXPECT_THROW(listener.accept(), TransportError);
  connector.get();
}

}  // namespace
}  // namespace multilane::runtime
