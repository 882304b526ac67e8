// tests/wan/relay_test.cpp — the relay forwards paths of its job (4 streams, byte exact, both
// ways), refuses an unauthenticated client without touching the target, refuses targets
// outside its allow list or outside the job; and `multilane relay` as a process: counters on
// SIGUSR1 and at the end, refusals printed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/stalled_connections.hpp"
#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/stream_governor.hpp"
#include "wan/relay_server.hpp"
#include "wan_testing.hpp"

namespace multilane::wan {
namespace {

using channels::ChannelError;
using channels::Channels;
using channels::PathId;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::ThrowsMessage;
using namespace testing;

// A relay on 127.0.0.1 running on a thread of its own while the test lives.
class RunningRelay {
 public:
  explicit RunningRelay(std::vector<std::string> allow = {}, std::uint64_t job = kJob,
                        std::optional<asio::ip::tcp::endpoint> forward_to = std::nullopt,
                        std::chrono::milliseconds handshake_timeout = 2s) {
    RelayServerOptions options;
    options.gate.listen = {asio::ip::make_address("127.0.0.1"), 0};
    options.gate.job_id = job;
    options.gate.secret = runtime::JobSecret::from_text(kSecret);
    options.gate.handshake_timeout = handshake_timeout;
    options.connect_timeout = 2s;
    options.allow = std::move(allow);
    options.forward_to = forward_to;
    server_ = std::make_unique<RelayServer>(options, [this](RelayEvent, const std::string& text) {
      std::lock_guard lock(mutex_);
      events_.push_back(text);
    });
    thread_ = std::thread([this] { server_->run(); });
  }
  ~RunningRelay() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    server_->stop();
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::uint16_t port() const { return server_->port(); }
  RelayStats stats() const { return server_->stats(); }
  // Waits (bounded) until `pred(stats)` holds.
  template <typename Pred>
  bool wait_for(Pred pred) const {
    for (int i = 0; i < 500 && !pred(stats()); ++i) std::this_thread::sleep_for(10ms);
    return pred(stats());
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  // Events are logged on the relay's loop after the counters move: waits (bounded) for one.
  bool wait_for_event(const std::string& text) const {
    for (int i = 0; i < 500; ++i) {
      for (const auto& event : events()) {
        if (event.find(text) != std::string::npos) return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  std::unique_ptr<RelayServer> server_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
};

channels::PathSpec through(const std::string& relay, std::uint16_t port,
                           const channels::PathOptions& o) {
  auto spec = connecting(port, o);
  spec.relay = relay;
  return spec;
}

// Forwards a path of four streams through `relay` and back, checking every byte.
void forward_a_path(RunningRelay& relay) {
  const auto o = options(4);
  Channels target(credentials());
  const PathId at_target = target.add_path(listening(o));
  const std::uint16_t port = target.local_port(at_target);
  auto client = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(through(relay.address(), port, o));
    for (std::size_t size : {0ul, 1ul, 300'001ul, 2'000'003ul}) {
      std::vector<std::byte> back(size);
      ch.sendrecv(p, pattern(size, 1), back);
      EXPECT_TRUE(back == pattern(size, 2)) << size;
    }
  });
  target.establish();
  std::uint64_t bytes = 0;
  for (std::size_t size : {0ul, 1ul, 300'001ul, 2'000'003ul}) {
    std::vector<std::byte> got(size);
    target.sendrecv(at_target, pattern(size, 2), got);
    EXPECT_TRUE(got == pattern(size, 1)) << size;
    bytes += size;
  }
  client.get();
  target.close(at_target);  // the client closed its side already: both ends are gone
  EXPECT_TRUE(relay.wait_for([&](const RelayStats& s) {
    return s.forwarded == 4 && s.active == 0 && s.bytes_to_targets >= bytes &&
           s.bytes_to_clients >= bytes;
  })) << stats_text(relay.stats());
  EXPECT_EQ(relay.stats().refused, 0u);
}

TEST(Relay, ForwardsAPathOfFourStreamsBothWays) {
  RunningRelay relay;
  forward_a_path(relay);
}

// Clients that stall in their handshake (silent, or stopped after their Hello) hold up neither
// other clients' paths nor the relay's stop, which ends them at once although their handshake
// timeout (30 s) is far off. The same gate (auth_gate.hpp) serves `multilane serve` and routers.
TEST(Relay, StalledHandshakesHoldUpNeitherPathsNorTheStop) {
  using runtime::testing::Stall;
  for (const Stall stall : {Stall::before_hello, Stall::after_hello}) {
    SCOPED_TRACE(stall == Stall::before_hello ? "silent" : "after its Hello");
    RunningRelay relay({}, kJob, std::nullopt, 30s);
    runtime::testing::StalledConnections stalled(relay.port(), 2, stall, kJob);
    forward_a_path(relay);
    stalled.expect_all_open();
    stalled.expect_closed_by([&] { relay.stop(); });
  }
}

// A stranger speaks to the relay; the relay refuses it and never contacts the target, whose
// listener therefore sees nobody at all.
// MPWide's Forwarder: the client names no relay and takes the relay for its peer.
TEST(Relay, ForwardModeCarriesAPathThatNamesNoRelay) {
  const auto o = options(4);
  Channels target(credentials());
  const PathId at_target = target.add_path(listening(o));
  const std::uint16_t port = target.local_port(at_target);
  RunningRelay relay({}, kJob, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  auto client = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(connecting(relay.port(), o));
    std::vector<std::byte> back(1'000'003);
    ch.sendrecv(p, pattern(300'001, 1), back);
    EXPECT_TRUE(back == pattern(1'000'003, 2));
  });
  target.establish();
  std::vector<std::byte> got(300'001);
  target.sendrecv(at_target, pattern(1'000'003, 2), got);
  EXPECT_TRUE(got == pattern(300'001, 1));
  client.get();
  target.close(at_target);
  EXPECT_TRUE(relay.wait_for([](const RelayStats& s) { return s.forwarded == 4 && s.active == 0; }))
      << stats_text(relay.stats());
}

// Each end of a relayed path measures only its hop to the relay, so neither adapts its
// streams in use (runtime::StreamOptions::relayed): all K take chunks, beyond the 16 that a
// direct path starts with (StreamGovernor::kCrowdLimit), named relay or forward mode alike.
TEST(Relay, APathThroughARelayKeepsAllItsStreamsInUseAtBothEnds) {
  constexpr int kStreams = 20;
  static_assert(kStreams > runtime::StreamGovernor::kCrowdLimit);
  const auto o = options(kStreams);
  ASSERT_TRUE(o.adapt_streams);
  constexpr std::size_t kSize = 4'000'000;
  // Opens a path from a client to a target (the client's spec from the target's port), carries
  // one split message each way and returns the streams in use at the client and at the target.
  auto in_use = [&](auto spec_for, auto relay_for) {
    Channels target(credentials());
    const PathId at_target = target.add_path(listening(o));
    const std::uint16_t port = target.local_port(at_target);
    auto relay = relay_for(port);
    auto client = in_background([&] {
      Channels ch(credentials());
      const PathId p = ch.open(spec_for(port, relay.get()));
      std::vector<std::byte> back(kSize);
      ch.sendrecv(p, pattern(kSize, 1), back);
      EXPECT_TRUE(back == pattern(kSize, 2));
      return ch.counters(p).streams_in_use;
    });
    target.establish();
    std::vector<std::byte> got(kSize);
    target.sendrecv(at_target, pattern(kSize, 2), got);
    EXPECT_TRUE(got == pattern(kSize, 1));
    const int at_client = client.get();
    const int at_target_end = target.counters(at_target).streams_in_use;
    target.close(at_target);
    return std::pair{at_client, at_target_end};
  };
  const auto direct = in_use([&](std::uint16_t port, RunningRelay*) { return connecting(port, o); },
                             [](std::uint16_t) { return std::unique_ptr<RunningRelay>(); });
  EXPECT_LE(direct.first, runtime::StreamGovernor::kCrowdLimit);
  EXPECT_LE(direct.second, runtime::StreamGovernor::kCrowdLimit);
  const auto named = in_use(
      [&](std::uint16_t port, RunningRelay* relay) { return through(relay->address(), port, o); },
      [](std::uint16_t) { return std::make_unique<RunningRelay>(); });
  EXPECT_EQ(named, std::pair(kStreams, kStreams));
  const auto forwarded =
      in_use([&](std::uint16_t, RunningRelay* relay) { return connecting(relay->port(), o); },
             [](std::uint16_t port) {
               return std::make_unique<RunningRelay>(
                   std::vector<std::string>{}, kJob,
                   asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
             });
  EXPECT_EQ(forwarded, std::pair(kStreams, kStreams));
}

TEST(Relay, ForwardModeRefusesATargetOutsideItsAllowList) {
  RelayServerOptions options;
  options.gate.listen = {asio::ip::make_address("127.0.0.1"), 0};
  options.gate.secret = runtime::JobSecret::from_text(kSecret);
  options.allow = {"10.0.0.0/8"};
  options.forward_to = asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 7000);
  EXPECT_THAT(
      [&] { RelayServer server(options, nullptr); },
      ThrowsMessage<UsageError>("--forward: 127.0.0.1:7000 is not in the --allow networks"));
}

TEST(Relay, RefusesAnUnauthenticatedClientWithoutReachingTheTarget) {
  RunningRelay relay;
  auto o = options(1);
  o.timeout = 600ms;
  Channels target(credentials());
  const PathId at_target = target.add_path(listening(o));
  auto stranger = in_background([&] {
    Channels ch({kJob, "not the secret of this job at all"});
    EXPECT_THAT(
        [&] { ch.open(through(relay.address(), target.local_port(at_target), options(1))); },
        ThrowsMessage<ChannelError>(HasSubstr("peer failed authentication")));
  });
  EXPECT_THAT([&] { target.establish(); },
              ThrowsMessage<ChannelError>(MatchesRegex(".*timed out after 0\\.6 s waiting for "
                                                       "connection \\(stream 1 of 1 on port "
                                                       "[0-9]+\\)")));  // no refusal: nobody came
  stranger.get();
  EXPECT_TRUE(relay.wait_for([](const RelayStats& s) { return s.refused == 1; }));
  EXPECT_EQ(relay.stats().forwarded, 0u);
  EXPECT_EQ(relay.stats().bytes_to_targets, 0u);
  EXPECT_TRUE(relay.wait_for_event("peer failed authentication (wrong job secret?)"))
      << ::testing::PrintToString(relay.events());
}

// Raw bytes that are no handshake at all get nothing either.
TEST(Relay, RefusesGarbage) {
  RunningRelay relay;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), relay.port()});
  const std::string junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n" + std::string(64, 'x');
  asio::write(socket, asio::buffer(junk));
  std::array<char, 256> reply{};
  asio::error_code ec;
  std::size_t total = 0;
  while (!ec) total += socket.read_some(asio::buffer(reply), ec);  // until the relay closes
  EXPECT_TRUE(relay.wait_for([](const RelayStats& s) { return s.refused == 1; }));
  EXPECT_EQ(relay.stats().forwarded, 0u);
  EXPECT_LE(total, 56u) << "at most the relay's own hello";
}

TEST(Relay, RefusesTargetsOutsideItsAllowList) {
  RunningRelay relay({"10.9.0.0/16"});
  Channels ch(credentials());
  EXPECT_THAT([&] { ch.open(through(relay.address(), 9, options(1))); },
              ThrowsMessage<ChannelError>(HasSubstr(
                  "cannot reach 127.0.0.1:9: 127.0.0.1:9 is not in the relay's allowed networks")));
  EXPECT_TRUE(relay.wait_for([](const RelayStats& s) { return s.refused == 1; }));
}

TEST(Relay, RefusesATargetOfAnotherJob) {
  RunningRelay relay;
  auto o = options(1);
  o.timeout = 1s;
  Channels other_job({kJob + 5, kSecret});
  const PathId at_target = other_job.add_path(listening(o));
  auto target = in_background([&] { EXPECT_THROW(other_job.establish(), ChannelError); });
  Channels ch(credentials());
  EXPECT_THAT([&] { ch.open(through(relay.address(), other_job.local_port(at_target), o)); },
              ThrowsMessage<ChannelError>(HasSubstr("peer is in job 4247, expected job 4242")));
  target.get();
  EXPECT_EQ(relay.stats().target_failures, 1u);
  EXPECT_EQ(relay.stats().forwarded, 0u);
}

TEST(RelayCommand, ForwardsCountsAndStopsOnSignals) {
  Subprocess relay({binary_dir() + "/multilane", "relay", "--listen", "127.0.0.1:0", "--stats"},
                   {std::string("MULTILANE_SECRET=") + kSecret, "MULTILANE_JOB_ID=4242"});
  const std::uint16_t relay_port = listening_port(relay, "listening");
  ASSERT_NE(relay_port, 0) << relay.output_so_far();
  const auto o = options(2);
  Channels target(credentials());
  const PathId at_target = target.add_path(listening(o));
  const std::string relay_address = "127.0.0.1:" + std::to_string(relay_port);
  auto client = in_background([&] {
    Channels ch(credentials());
    const PathId p = ch.open(through(relay_address, target.local_port(at_target), o));
    ch.send(p, pattern(100'000));
  });
  target.establish();
  std::vector<std::byte> got(100'000);
  target.recv(at_target, got);
  EXPECT_TRUE(got == pattern(100'000));
  client.get();
  Channels stranger({kJob, "a secret of nobody in particular"});
  EXPECT_THROW(stranger.open(through(relay_address, 1, options(1))), ChannelError);

  auto wait_for_output = [&](const std::string& text) {
    for (int i = 0; i < 500 && relay.output_so_far().find(text) == std::string::npos; ++i) {
      std::this_thread::sleep_for(10ms);
    }
  };
  wait_for_output("refused 127.0.0.1:");
  relay.signal(SIGUSR1);
  wait_for_output("1 refused");
  relay.signal(SIGTERM);
  const Finished finished = relay.wait(10s);
  EXPECT_EQ(finished.status, 0) << finished.output;
  EXPECT_THAT(finished.output, HasSubstr("channel 1 127.0.0.1:"));
  EXPECT_THAT(finished.output, HasSubstr("refused 127.0.0.1:"));
  EXPECT_THAT(finished.output,
              MatchesRegex("(.|\n)*multilane relay: channels 2 forwarded \\([0-9] active\\), 1 "
                           "refused, 0 unreachable targets; [0-9.]+ [KMG]?i?B to targets(.|\n)*"));
}

}  // namespace
}  // namespace multilane::wan
