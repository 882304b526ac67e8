// tests/wan/channels_test.cpp — the channels API on loopback: round trips over 1, 4 and 16
// streams with odd sizes, dynamic sizes, cycles in a ring, scatter/gather to two peers,
// relaying between paths, and every refusal (wrong secret, other job, stream count).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "multilane/errors.hpp"
#include "wan_testing.hpp"

namespace multilane::wan {
namespace {

using channels::ChannelError;
using channels::Channels;
using channels::Incoming;
using channels::Outgoing;
using channels::PathCounters;
using channels::PathId;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::ThrowsMessage;
using namespace testing;

const std::vector<std::size_t> kOddSizes{0, 1, 4097, 32767, 32768, 300'001, 1024 * 1024 + 3};

// One end listening (this thread), the other connected (returned future runs `peer`).
struct Pair {
  explicit Pair(const channels::PathOptions& o) : listener(credentials()) {
    path = listener.add_path(listening(o));
    port = listener.local_port(path);
  }
  Channels listener;
  PathId path = 0;
  std::uint16_t port = 0;
};

class RoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(RoundTrip, OddSizesArriveByteExactBothWays) {
  const auto o = options(GetParam());
  Pair a(o);
  auto b = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(connecting(a.port, o));
    EXPECT_EQ(ch.streams(p), GetParam());
    for (std::size_t size : kOddSizes) {
      std::vector<std::byte> got(size);
      ch.recv(p, got);
      EXPECT_TRUE(got == pattern(size, 1)) << size << " bytes over " << GetParam() << " streams";
      std::vector<std::byte> back(size + 5);
      ch.sendrecv(p, pattern(size + 5, 3), back);
      EXPECT_TRUE(back == pattern(size + 5, 2)) << size;
    }
  });
  a.listener.establish();
  for (std::size_t size : kOddSizes) {
    a.listener.send(a.path, pattern(size, 1));
    std::vector<std::byte> back(size + 5);
    a.listener.sendrecv(a.path, pattern(size + 5, 2), back);
    EXPECT_TRUE(back == pattern(size + 5, 3)) << size;
  }
  b.get();
  const PathCounters counters = a.listener.counters(a.path);
  EXPECT_EQ(counters.messages_sent, 2 * std::size(kOddSizes));
  std::uint64_t bytes = 0;
  for (std::size_t size : kOddSizes) bytes += 2 * size + 5;
  EXPECT_EQ(counters.bytes_sent, bytes);
}

INSTANTIATE_TEST_SUITE_P(Streams, RoundTrip, ::testing::Values(1, 4, 16));

TEST(Channels, DynamicSizeIsReturnedAndALimitIsEnforced) {
  const auto o = options(4);
  Pair a(o);
  auto b = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(connecting(a.port, o));
    for (std::size_t size : {0ul, 7ul, 200'003ul}) {
      std::vector<std::byte> limit(300'000, std::byte{0xee});
      const auto got = ch.dsendrecv(p, pattern(size / 2, 5), limit);
      EXPECT_EQ(got, size);
      limit.resize(got);
      EXPECT_TRUE(limit == pattern(size, 4)) << size;
    }
    std::vector<std::byte> small(10);
    EXPECT_THAT([&] { ch.dsendrecv(p, {}, small); },
                ThrowsMessage<ChannelError>(HasSubstr("has 11 bytes, more than the receive "
                                                      "limit of 10")));
  });
  a.listener.establish();
  for (std::size_t size : {0ul, 7ul, 200'003ul}) {
    std::vector<std::byte> limit(size / 2 + 1);
    EXPECT_EQ(a.listener.dsendrecv(a.path, pattern(size, 4), limit), size / 2);
    EXPECT_TRUE(std::equal(limit.begin(), limit.begin() + static_cast<long>(size / 2),
                           pattern(size / 2, 5).begin()));
  }
  try {
    a.listener.send(a.path, pattern(11));
  } catch (const ChannelError&) {
    // The peer may close before the bytes left; the receiver's error is what is tested.
  }
  b.get();
}

// Three ends in a ring, each sending 4 MiB to the next while receiving from the previous: more
// than the socket buffers hold, so it only completes if both directions move at once.
TEST(Channels, CycleInARingMovesBothPathsAtOnce) {
  const auto o = options(2);
  constexpr std::size_t kSize = 4 << 20;
  std::vector<std::unique_ptr<Channels>> ends;
  std::vector<PathId> listen_path, next_path;
  for (int i = 0; i < 3; ++i) {
    ends.push_back(std::make_unique<Channels>(credentials()));
    listen_path.push_back(ends[i]->add_path(listening(o)));  // from the previous end
  }
  for (int i = 0; i < 3; ++i) {
    next_path.push_back(
        ends[i]->add_path(connecting(ends[(i + 1) % 3]->local_port(listen_path[(i + 1) % 3]), o)));
  }
  std::vector<std::future<void>> runs;
  for (int i = 0; i < 3; ++i) {
    runs.push_back(in_background([&, i] {
      Channels& ch = *ends[i];
      ch.establish();
      std::vector<std::byte> got(kSize);
      ch.cycle(next_path[i], pattern(kSize, i), listen_path[i], got);
      EXPECT_TRUE(got == pattern(kSize, (i + 2) % 3)) << "end " << i;
    }));
  }
  for (auto& r : runs) r.get();
}

TEST(Channels, ScatterAndGatherToTwoPeersWithUnequalParts) {
  const auto o = options(3);
  Channels root(credentials());
  const PathId to_b = root.add_path(listening(o));
  const PathId to_c = root.add_path(listening(o));
  auto leaf = [&](std::uint16_t port, std::size_t size, unsigned seed) {
    return in_background([&, port, size, seed] {
      Channels ch(credentials());
      const PathId p = ch.open(connecting(port, o));
      std::vector<std::byte> got(size);
      ch.recv(p, got);
      EXPECT_TRUE(got == pattern(size, seed));
      ch.send(p, pattern(size * 2, seed + 1));
    });
  };
  auto b = leaf(root.local_port(to_b), 100'000, 1);
  auto c = leaf(root.local_port(to_c), 3, 2);
  root.establish();
  const auto for_b = pattern(100'000, 1), for_c = pattern(3, 2);
  const std::vector<Outgoing> out{{to_b, for_b}, {to_c, for_c}};
  root.psend(out);
  std::vector<std::byte> from_b(200'000), from_c(6);
  std::vector<Incoming> in{{to_b, from_b}, {to_c, from_c}};
  root.precv(in);
  EXPECT_TRUE(from_b == pattern(200'000, 2));
  EXPECT_TRUE(from_c == pattern(6, 3));
  EXPECT_EQ(in[0].received, 200'000u);
  b.get();
  c.get();
}

TEST(Channels, BarrierAndPathsListedInOppositeOrders) {
  const auto o = options(1);
  Channels a(credentials()), b(credentials());
  const PathId a_listens = a.add_path(listening(o));
  const PathId b_listens = b.add_path(listening(o));
  const PathId b_connects = b.add_path(connecting(a.local_port(a_listens), o));
  const PathId a_connects = a.add_path(connecting(b.local_port(b_listens), o));
  auto other = in_background([&] {
    b.establish();
    b.barrier(b_connects);
    b.barrier(b_listens);
    std::vector<std::byte> got(5);
    b.recv(b_connects, got);
    EXPECT_TRUE(got == pattern(5));
  });
  a.establish();
  a.barrier(a_listens);
  a.barrier(a_connects);
  a.send(a_listens, pattern(5));
  other.get();
}

TEST(Channels, RelayForwardsBothWaysUntilAnEndLeaves) {
  const auto o = options(4);
  Channels relay(credentials());
  const PathId from_a = relay.add_path(listening(o));
  const PathId from_b = relay.add_path(listening(o));
  const std::vector<std::size_t> sizes{1, 70'000, 0, 2'000'001};
  auto a = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(connecting(relay.local_port(from_a), o));
    for (std::size_t size : sizes) ch.send(p, pattern(size, 9));
    std::vector<std::byte> reply(12);
    ch.recv(p, reply);
    EXPECT_TRUE(reply == pattern(12, 10));
  });  // leaving closes the path: the relay ends
  auto b = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(connecting(relay.local_port(from_b), o));
    for (std::size_t size : sizes) {
      std::vector<std::byte> got(size);
      ch.recv(p, got);
      EXPECT_TRUE(got == pattern(size, 9)) << size;
    }
    ch.send(p, pattern(12, 10));
    std::vector<std::byte> none(1);
    EXPECT_THROW(ch.recv(p, none), ChannelError) << "the relay closes once a leaves";
  });
  relay.establish();
  const std::pair<PathId, PathId> pair{from_a, from_b};
  const auto counters = relay.relay({&pair, 1});
  a.get();
  b.get();
  EXPECT_EQ(counters.messages, sizes.size() + 1);
  EXPECT_EQ(counters.bytes, 1 + 70'000 + 2'000'001 + 12u);
}

// The listening end refuses both streams of the stranger (it opens them at once) and keeps
// waiting for a member of its job, so it reports a timeout that names the refusals.
TEST(Channels, WrongSecretIsRejectedAtBothEnds) {
  auto o = options(2);
  // Both of the stranger's handshakes must fail within it, also under ASan on a loaded machine;
  // the listener waits all of it for a member of its job.
  o.timeout = 3s;
  Pair a(o);
  auto b = in_background([&] {
    Channels ch({kJob, "another secret, not the job's"});
    EXPECT_THAT([&] { ch.open(connecting(a.port, o)); },
                ThrowsMessage<ChannelError>(HasSubstr("path 0 (to 127.0.0.1:")));
  });
  EXPECT_THAT(
      [&] { a.listener.establish(); },
      ThrowsMessage<ChannelError>(MatchesRegex(
          "path 0 \\(listening on port [0-9]+\\): timed out after 3 s waiting for "
          "connection \\(stream 1 of 2 on port [0-9]+\\); refused 2 connections that failed "
          "the handshake, the last: handshake with 127\\.0\\.0\\.1:[0-9]+: peer failed "
          "authentication \\(wrong job secret\\?\\)")));
  b.get();
  EXPECT_THAT([&] { a.listener.send(a.path, pattern(1)); },
              ThrowsMessage<UsageError>(HasSubstr("path 0 is not established")));
}

TEST(Channels, OtherJobIsRejected) {
  auto o = options(1);
  // The stranger's handshake must come within it, also under ASan on a loaded machine; the
  // listener stops at the first handshake of another job.
  o.timeout = 3s;
  Pair a(o);
  auto b = in_background([&] {
    Channels ch({kJob + 1, kSecret});
    EXPECT_THROW(ch.open(connecting(a.port, o)), ChannelError);
  });
  EXPECT_THAT([&] { a.listener.establish(); },
              ThrowsMessage<ChannelError>(HasSubstr("peer is in job 4243, expected job 4242")));
  b.get();
}

TEST(Channels, DifferentStreamCountsAreNamed) {
  Pair a(options(4));
  auto b = in_background([&] {
    Channels ch(credentials());
    auto o = options(2);
    o.timeout = 500ms;  // its second stream waits in the refusing end's backlog until then
    try {
      ch.open(connecting(a.port, o));
    } catch (const ChannelError&) {
      // Its streams are closed by the refusing end; where exactly it notices varies.
    }
  });
  EXPECT_THAT(
      [&] { a.listener.establish(); },
      ThrowsMessage<ChannelError>(MatchesRegex(
          ".*peer 127\\.0\\.0\\.1:[0-9]+ opened a path of 2 streams, this end expects 4.*")));
  b.get();
}

TEST(Channels, SilentPeerTimesOutSayingWhatWasAwaited) {
  auto o = options(2);
  o.timeout = 200ms;
  Pair a(o);
  std::promise<void> done;
  auto b = in_background([&, finished = done.get_future()] {
    Channels ch(credentials());
    ch.open(connecting(a.port, o));
    finished.wait_for(5s);
  });
  a.listener.establish();
  std::vector<std::byte> buffer(1000);
  EXPECT_THAT([&] { a.listener.recv(a.path, buffer); },
              ThrowsMessage<ChannelError>(MatchesRegex(
                  "timed out after 0\\.2 s waiting for message 0 from 127\\.0\\.0\\.1:[0-9]+: "
                  "received 0 of 1000 bytes")));
  done.set_value();
  b.get();
}

TEST(Channels, BadArgumentsAreUsageErrors) {
  EXPECT_THAT(
      [] {
        Channels ch({1, "short"});
      },
      ThrowsMessage<UsageError>(HasSubstr("at least 16 characters, got 5")));
  Channels ch(credentials());
  EXPECT_THAT([&] { ch.send(0, {}); },
              ThrowsMessage<UsageError>(HasSubstr("path 0 does not exist (no paths yet)")));
  auto o = options(0);
  EXPECT_THAT([&] { ch.add_path(listening(o)); },
              ThrowsMessage<UsageError>(HasSubstr("path 0: streams must be 1..1024, got 0")));
  EXPECT_THAT([&] { ch.add_path(connecting(0, options(1))); },
              ThrowsMessage<UsageError>(HasSubstr("the peer's port must be 1..65535")));
  auto relayed = connecting(1, options(1));
  relayed.relay = "127.0.0.1";
  EXPECT_THAT([&] { ch.add_path(relayed); },
              ThrowsMessage<UsageError>(HasSubstr("\"127.0.0.1\" is not host:port")));
}

}  // namespace
}  // namespace multilane::wan
