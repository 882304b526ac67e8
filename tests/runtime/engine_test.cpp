// Engine (runtime/transport/engine.hpp): who drives it (and reads the sockets), a receive that
// outlives the peer's last adopted stream while another stream of that peer is still in its
// handshake here, and split messages shared by the streams that move.
//
// The connecting side finishes its handshake once it has read ours, before we have read its
// proof, so it may stripe a message over a stream we have not adopted yet, and finish and
// close before we do. A proxy holds the second stream's bytes after its Hello, so the sender
// finishes both handshakes, sends over both streams and closes, while this side has adopted
// only the first stream and sees it close.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "driving.hpp"
#include "loopback.hpp"
#include "pausing_proxy.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "runtime/transport/call_space.hpp"
#include "runtime/transport/engine.hpp"
#include "stalled_connections.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

// The Hello of the handshake (auth.hpp): magic, version, role, job id, identity, nonce.
constexpr std::uint64_t kHelloBytes = 4 + 2 + 2 + 8 + 8 + 32;

EngineConfig config_of(int rank) {
  EngineConfig config;
  config.rank = rank;
  config.size = 2;
  config.job_id = 0x5eed;
  config.secret = JobSecret::from_text("engine test");
  config.lan.streams = 2;
  config.stripe.threshold = 1024;
  config.stripe.max_chunk = 4096;
  config.timeout = 10s;
  return config;
}

std::string port_of(const std::string& address) {
  return address.substr(address.rfind(':') + 1);
}

// Message `id` of point-to-point traffic from rank 0 into `bytes` on rank 1, in the background;
// the result goes to `done`.
void receive_in_background(Engine& receiver, std::span<std::byte> bytes, std::uint64_t id,
                           std::promise<std::string>& done) {
  receiver.start_background(
      [&receiver, bytes, id](Completion completion) {
        receiver.recv({.peer = 0, .key = {0, id}, .signature = 0, .bytes = bytes, .landed = {}},
                      std::move(completion));
      },
      [&done](const Outcome& error) { done.set_value(testing::text_of(error)); });
}

// The same message sent from rank 0 to rank 1 over lane 0.
void send_in_background(Engine& sender, std::span<const std::byte> bytes, std::uint64_t id,
                        std::promise<std::string>& done) {
  sender.start_background(
      [&sender, bytes, id](Completion completion) {
        sender.send({1, {0}, LinkClass::Lan, {0, id}, 0, bytes}, std::move(completion));
      },
      [&done](const Outcome& error) { done.set_value(testing::text_of(error)); });
}

// Runs `start` as a blocking operation on this thread. The progress thread may still be
// leaving the loop it drove for an earlier background operation: until it has, run_blocking()
// refuses (and runs nothing), so this tries again for up to 5 s.
template <typename Start>
std::optional<std::string> run_here(Engine& engine, const Start& start) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < give_up) {
    if (Outcome outcome; engine.run_blocking(start, outcome)) return testing::text_of(outcome);
  }
  return std::nullopt;
}

TEST(Engine, AReceiveOutlivesThePeersLastStreamWhileAnotherIsInItsHandshake) {
  auto receiver = std::make_unique<Engine>(config_of(1));
  const auto target =
      static_cast<std::uint16_t>(std::stoi(port_of(receiver->listening_addresses().at(0))));
  testing::PausingProxy proxy(target, 256 * 1024);
  proxy.pause_after(1, kHelloBytes);  // the second stream: its Hello passes, its proof waits
  auto sender = std::make_unique<Engine>(config_of(0));
  sender->set_peer_addresses(1, {"127.0.0.1:" + std::to_string(proxy.port())});

  const std::vector<std::byte> message = testing::pattern(64 * 1024);
  std::vector<std::byte> received(message.size());
  std::promise<std::string> received_done, sent_done;
  receive_in_background(*receiver, received, 1, received_done);
  send_in_background(*sender, message, 1, sent_done);
  auto sent = sent_done.get_future();
  ASSERT_EQ(sent.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(sent.get(), "");
  sender.reset();  // closes both streams; the second one's bytes wait in the proxy

  auto done = received_done.get_future();
  // The first stream has closed here by now; the receive must still wait for the second.
  ASSERT_EQ(done.wait_for(500ms), std::future_status::timeout)
      << "the receive ended while a stream of its sender was in its handshake: " << done.get();
  proxy.resume(1);
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(done.get(), "");
  EXPECT_EQ(received, message);
  // Not a vacuous pass: the held stream carried some of the message (more than its Hello and
  // its 32-byte proof).
  EXPECT_GT(proxy.forwarded_when_settled(1), kHelloBytes + 32 + 1024);
}

// A blocking operation runs on the caller's thread when the engine is idle, and is refused
// (nothing run) while a background operation is in flight; the sender, meanwhile idle, still
// accepts and completes nothing it was not asked to.
TEST(Engine, ABlockingOperationRunsOnTheCallersThreadOnlyWhenNothingIsInTheBackground) {
  auto receiver = std::make_unique<Engine>(config_of(1));
  auto sender = std::make_unique<Engine>(config_of(0));
  sender->set_peer_addresses(1, receiver->listening_addresses());
  const std::vector<std::byte> first = testing::pattern(5000);
  const std::vector<std::byte> second = testing::pattern(300);
  std::vector<std::byte> first_in(first.size()), second_in(second.size());

  std::promise<std::string> background_done;
  receive_in_background(*receiver, first_in, 1, background_done);
  bool ran = false;
  Outcome outcome;
  EXPECT_FALSE(receiver->run_blocking(
      [&](Completion done) {
        ran = true;
        done(kSucceeded);
      },
      outcome));
  EXPECT_FALSE(ran);

  std::thread::id sent_on;
  Outcome sent = Failure{};
  ASSERT_TRUE(sender->run_blocking(
      [&](Completion done) {
        sent_on = std::this_thread::get_id();
        sender->send({1, {0}, LinkClass::Lan, {0, 1}, 0, first}, std::move(done));
      },
      sent));
  EXPECT_EQ(testing::text_of(sent), "");
  EXPECT_FALSE(sent.has_value());
  EXPECT_EQ(sent_on, std::this_thread::get_id());
  auto done = background_done.get_future();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(done.get(), "");
  EXPECT_EQ(first_in, first);

  // Idle again: the receive of the second message runs here, and its send in the background.
  std::promise<std::string> second_sent;
  send_in_background(*sender, second, 2, second_sent);
  std::thread::id received_on;
  const std::optional<std::string> received = run_here(*receiver, [&](Completion done) {
    received_on = std::this_thread::get_id();
    receiver->recv({.peer = 0, .key = {0, 2}, .signature = 0, .bytes = second_in, .landed = {}},
                   std::move(done));
  });
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(*received, "");
  EXPECT_EQ(received_on, std::this_thread::get_id());
  EXPECT_EQ(second_in, second);
  auto second_done = second_sent.get_future();
  ASSERT_EQ(second_done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(second_done.get(), "");
}

// A blocking receive reads its sockets itself while it spins, and leaves them listed for the
// next blocking call; the progress thread, which does not poll, hands them back to the reactor
// before it drives, so that a background receive that follows still completes, and the next
// blocking receive reads them again.
TEST(Engine, SocketsReadByASpinningCallerAreWatchedAgainWhenTheProgressThreadDrives) {
  auto receiver = std::make_unique<Engine>(config_of(1));
  auto sender = std::make_unique<Engine>(config_of(0));
  sender->set_peer_addresses(1, receiver->listening_addresses());
  for (const std::uint64_t id : {1, 2, 3, 4}) {
    SCOPED_TRACE(id);
    const std::vector<std::byte> message = testing::pattern(100 + id);
    std::vector<std::byte> received(message.size());
    if (id % 2 == 1) {  // received by a blocking call, sent in the background
      std::promise<std::string> sent;
      send_in_background(*sender, message, id, sent);
      const auto result = run_here(*receiver, [&](Completion done) {
        receiver->recv({.peer = 0, .key = {0, id}, .signature = 0, .bytes = received, .landed = {}},
                       std::move(done));
      });
      ASSERT_EQ(result, std::optional<std::string>(""));
      auto sent_done = sent.get_future();
      ASSERT_EQ(sent_done.wait_for(5s), std::future_status::ready);
      EXPECT_EQ(sent_done.get(), "");
    } else {  // received in the background, sent by a blocking call
      std::promise<std::string> done;
      receive_in_background(*receiver, received, id, done);
      const auto sent = run_here(*sender, [&](Completion completion) {
        sender->send({1, {0}, LinkClass::Lan, {0, id}, 0, message}, std::move(completion));
      });
      ASSERT_EQ(sent, std::optional<std::string>(""));
      auto received_done = done.get_future();
      ASSERT_EQ(received_done.wait_for(5s), std::future_status::ready)
          << "a socket left to a spinning caller was not watched by the progress thread";
      EXPECT_EQ(received_done.get(), "");
    }
    EXPECT_EQ(received, message);
  }
}

// A split message's pieces go to the streams that can take them: a stream that cannot write
// (its path holds its bytes) ends up with a piece or two, not a quarter of the message, and
// the message is complete once that stream moves again.
TEST(Engine, ASplitMessageGoesToTheStreamsThatMove) {
  EngineConfig receiving = config_of(1);
  EngineConfig sending = config_of(0);
  sending.lan.streams = 4;
  sending.lan.socket = {.send_buffer = 32 * 1024, .receive_buffer = 32 * 1024, .unsent_limit = 0};
  sending.stripe = {.threshold = 1024, .max_chunk = 16 * 1024};
  auto receiver = std::make_unique<Engine>(receiving);
  const auto target =
      static_cast<std::uint16_t>(std::stoi(port_of(receiver->listening_addresses().at(0))));
  testing::PausingProxy proxy(target, 32 * 1024);
  proxy.pause_after(1, kHelloBytes + 32);  // the second stream: handshake only
  auto sender = std::make_unique<Engine>(sending);
  sender->set_peer_addresses(1, {"127.0.0.1:" + std::to_string(proxy.port())});

  const std::vector<std::byte> message = testing::pattern(4 << 20);
  std::vector<std::byte> received(message.size());
  std::promise<std::string> received_done, sent_done;
  receive_in_background(*receiver, received, 1, received_done);
  send_in_background(*sender, message, 1, sent_done);

  // The three moving streams carry all but what the held one took before it filled up.
  const std::uint64_t held_at_most = 256 * 1024;
  const auto others = [&]() -> std::uint64_t {
    try {
      return proxy.forwarded(0) + proxy.forwarded(2) + proxy.forwarded(3);
    } catch (const std::out_of_range&) {
      return 0;  // not every stream connected yet
    }
  };
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (others() < message.size() - held_at_most && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_GE(others(), message.size() - held_at_most);
  auto done = received_done.get_future();
  EXPECT_EQ(done.wait_for(0s), std::future_status::timeout);  // the held stream's piece is missing
  proxy.resume(1);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(done.get(), "");
  EXPECT_EQ(received, message);
  auto sent = sent_done.get_future();
  ASSERT_EQ(sent.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(sent.get(), "");
}

// Connections that stall in their handshake (silent, or stopped after their Hello) hold up
// neither the traffic of the ranks nor the engine's end: it closes them at once although their
// handshake timeout (30 s) is far off.
TEST(Engine, StalledHandshakesHoldUpNeitherTrafficNorTheEnginesEnd) {
  for (const testing::Stall stall : {testing::Stall::before_hello, testing::Stall::after_hello}) {
    SCOPED_TRACE(stall == testing::Stall::before_hello ? "silent" : "after its Hello");
    EngineConfig receiving = config_of(1);
    receiving.timeout = 30s;
    auto receiver = std::make_unique<Engine>(receiving);
    const auto port =
        static_cast<std::uint16_t>(std::stoi(port_of(receiver->listening_addresses().at(0))));
    testing::StalledConnections stalled(port, 2, stall, receiving.job_id);
    auto sender = std::make_unique<Engine>(config_of(0));
    sender->set_peer_addresses(1, receiver->listening_addresses());
    const std::vector<std::byte> message = testing::pattern(5000);
    std::vector<std::byte> arrived(message.size());
    std::promise<std::string> received, sent;
    receive_in_background(*receiver, arrived, 1, received);
    send_in_background(*sender, message, 1, sent);
    auto got = received.get_future();
    ASSERT_EQ(got.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(got.get(), "");
    EXPECT_EQ(sent.get_future().get(), "");
    EXPECT_EQ(arrived, message);
    stalled.expect_all_open();
    stalled.expect_closed_by([&] { receiver.reset(); });
  }
}

// A split message to a rank whose connections cannot be made fails with the reason, although
// no stream holds a piece of it yet.
TEST(Engine, ASplitMessageToAnUnreachableRankFailsNamingTheConnection) {
  auto sender = std::make_unique<Engine>(config_of(0));
  sender->set_peer_addresses(1, {"nowhere:1"});  // fails at once, before any stream exists
  const std::vector<std::byte> message = testing::pattern(64 * 1024);
  Outcome sent;
  ASSERT_TRUE(sender->run_blocking(
      [&](Completion done) {
        sender->send({1, {0}, LinkClass::Lan, {0, 1}, 0, message}, std::move(done));
      },
      sent));
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->text.rfind("could not connect to rank 1 at nowhere:1: ", 0), 0u) << sent->text;
  EXPECT_EQ(sent->kind, ErrorKind::usage) << sent->text;  // not an address: the caller's mistake
}

// Rank 1 answers over the connections rank 0 opened: it never dials rank 0 (whose address it is
// given wrong), and the whole message (one stream) and the split one (both streams) arrive.
TEST(Engine, AnAnswerTravelsOverTheConnectionsThePeerOpened) {
  auto answering = std::make_unique<Engine>(config_of(1));
  auto asking = std::make_unique<Engine>(config_of(0));
  asking->set_peer_addresses(1, answering->listening_addresses());
  answering->set_peer_addresses(0, {"nowhere:1"});
  // Split over both of rank 0's streams: once it is in, rank 1 has adopted both connections
  // (it answers over them only when all of a link's streams are open).
  const std::vector<std::byte> question = testing::pattern(64 * 1024);
  std::vector<std::byte> question_in(question.size());
  std::promise<std::string> asked;
  receive_in_background(*answering, question_in, 1, asked);
  const auto sent = run_here(*asking, [&](Completion done) {
    asking->send({1, {0}, LinkClass::Lan, {0, 1}, 0, question}, std::move(done));
  });
  ASSERT_EQ(sent, std::optional<std::string>(""));
  auto question_done = asked.get_future();
  ASSERT_EQ(question_done.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(question_done.get(), "");
  ASSERT_EQ(question_in, question);

  for (const std::size_t size : {std::size_t{200}, std::size_t{50'000}}) {
    SCOPED_TRACE(size);
    const std::vector<std::byte> answer = testing::pattern(size);
    std::vector<std::byte> answer_in(size);
    const std::uint64_t id = size;
    std::promise<std::string> answered;
    asking->start_background(
        [&asking, &answer_in, id](Completion completion) {
          asking->recv(
              {.peer = 1, .key = {0, id}, .signature = 0, .bytes = answer_in, .landed = {}},
              std::move(completion));
        },
        [&answered](const Outcome& error) { answered.set_value(testing::text_of(error)); });
    const auto back = run_here(*answering, [&](Completion done) {
      answering->send({0, {0}, LinkClass::Lan, {0, id}, 0, answer}, std::move(done));
    });
    ASSERT_EQ(back, std::optional<std::string>(""));
    auto answer_done = answered.get_future();
    ASSERT_EQ(answer_done.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(answer_done.get(), "");
    EXPECT_EQ(answer_in, answer);
  }
}

// Two ranks that send first at once each open their own connections; the higher rank then
// writes on the lower rank's, so both directions share one (each carries the other's
// acknowledgements), and messages go on arriving whole both ways.
TEST(Engine, TwoRanksThatSentAtOnceShareTheLowerRanksConnections) {
  auto low = std::make_unique<Engine>(config_of(0));
  auto high = std::make_unique<Engine>(config_of(1));
  low->set_peer_addresses(1, high->listening_addresses());
  high->set_peer_addresses(0, low->listening_addresses());
  // Message `id` of `size` bytes each way at once, both in the background.
  const auto exchange = [&](std::uint64_t id, std::size_t size) {
    const std::vector<std::byte> up = testing::pattern(size, 1);
    const std::vector<std::byte> down = testing::pattern(size, 2);
    std::vector<std::byte> up_in(size), down_in(size);
    std::promise<std::string> sent_up, sent_down, got_up, got_down;
    const auto background = [](Engine& engine, std::promise<std::string>& done, auto operation) {
      engine.start_background(std::move(operation), [&done](const Outcome& error) {
        done.set_value(testing::text_of(error));
      });
    };
    background(*high, got_up, [&](Completion c) {
      high->recv({.peer = 0, .key = {0, id}, .signature = 0, .bytes = up_in, .landed = {}},
                 std::move(c));
    });
    background(*low, got_down, [&](Completion c) {
      low->recv({.peer = 1, .key = {0, id}, .signature = 0, .bytes = down_in, .landed = {}},
                std::move(c));
    });
    background(*low, sent_up, [&](Completion c) {
      low->send({1, {0}, LinkClass::Lan, {0, id}, 0, up}, std::move(c));
    });
    background(*high, sent_down, [&](Completion c) {
      high->send({0, {0}, LinkClass::Lan, {0, id}, 0, down}, std::move(c));
    });
    for (auto* done : {&sent_up, &sent_down, &got_up, &got_down}) {
      auto result = done->get_future();
      ASSERT_EQ(result.wait_for(5s), std::future_status::ready);
      EXPECT_EQ(result.get(), "");
    }
    EXPECT_EQ(up_in, up);
    EXPECT_EQ(down_in, down);
  };
  exchange(1, 64 * 1024);  // split over both streams: both ranks open both of theirs
  for (std::uint64_t id = 2; id < 6; ++id) exchange(id, id % 2 == 0 ? 200 : 50'000);
  EXPECT_EQ(high->send_counters().moved_to_peer, 2u);  // both streams of the link
  EXPECT_EQ(low->send_counters().moved_to_peer, 0u);
}

// begin_call()'s owner is the call's own state: the engine holds it until end_call(), or
// until the engine itself ends.
TEST(Engine, HoldsACallsOwnerUntilTheCallOrTheEngineEnds) {
  auto engine = std::make_unique<Engine>(config_of(1));
  auto owner = std::make_shared<int>(0);
  testing::on_driving_thread(
      *engine, [&] { EXPECT_FALSE(engine->begin_call(1, 0x5ca1, {}, owner).has_value()); });
  EXPECT_EQ(owner.use_count(), 2);
  testing::on_driving_thread(*engine, [&] { engine->end_call(1); });
  EXPECT_EQ(owner.use_count(), 1);
  testing::on_driving_thread(
      *engine, [&] { EXPECT_FALSE(engine->begin_call(2, 0x5ca1, {}, owner).has_value()); });
  EXPECT_EQ(owner.use_count(), 2);
  engine.reset();
  EXPECT_EQ(owner.use_count(), 1);
}

// Each call space ends its calls by itself (call_space.hpp): after call #5 of space 3 ended,
// a frame of call #1 of space 0 that arrives before that call began is kept for it (one
// watermark for every space would refuse it and close its connection). One stream, so the
// point-to-point message sent after the frame arrives after it.
TEST(Engine, ACallThatEndedInOneSpaceEndsNoneOfAnother) {
  EngineConfig receiving = config_of(1), sending = config_of(0);
  receiving.lan.streams = sending.lan.streams = 1;
  auto receiver = std::make_unique<Engine>(receiving);
  auto sender = std::make_unique<Engine>(sending);
  sender->set_peer_addresses(1, receiver->listening_addresses());
  const std::uint64_t later_space = first_sequence(3) + 5;
  testing::on_driving_thread(*receiver, [&] {
    EXPECT_FALSE(receiver->begin_call(later_space, 0x5ca1, {}).has_value());
    receiver->end_call(later_space);
  });
  const std::vector<std::byte> data = testing::pattern(300);
  std::vector<std::byte> got(data.size()), token(1);
  std::promise<std::string> sent, token_sent, token_received;
  sender->start_background(
      [&](Completion done) {
        sender->send({1, {0}, LinkClass::Lan, {1, 0}, 0x77, data}, std::move(done));
      },
      [&sent](const Outcome& error) { sent.set_value(testing::text_of(error)); });
  send_in_background(*sender, std::span<const std::byte>(data).first(1), 9, token_sent);
  receive_in_background(*receiver, token, 9, token_received);
  auto token_done = token_received.get_future();
  ASSERT_EQ(token_done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(token_done.get(), "");
  const std::optional<std::string> received = run_here(*receiver, [&](Completion done) {
    if (const Outcome mismatch = receiver->begin_call(1, 0x77, {})) return done(mismatch);
    receiver->recv({.peer = 0, .key = {1, 0}, .signature = 0x77, .bytes = got, .landed = {}},
                   std::move(done));
  });
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(*received, "");
  EXPECT_EQ(got, data);
  for (auto* done : {&sent, &token_sent}) {
    auto future = done->get_future();
    ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(future.get(), "");
  }
}

// A blocking driver may block in its call's own work only while no other communicator's call
// on another thread can need the engine (Engine::set_shared).
TEST(Engine, AJobSharedByConcurrentCallersNeverLetsItsDriverBlock) {
  Engine engine(config_of(0));
  const auto drives_alone = [&] {
    bool alone = false;
    const std::optional<std::string> ran = run_here(engine, [&](Completion done) {
      alone = engine.blocking_call_drives_alone();
      done(kSucceeded);
    });
    EXPECT_TRUE(ran.has_value());
    return alone;
  };
  EXPECT_TRUE(drives_alone());
  engine.set_shared(true);
  EXPECT_FALSE(drives_alone());
  engine.set_shared(false);
  EXPECT_TRUE(drives_alone());
}

}  // namespace
}  // namespace multilane::runtime

namespace multilane::runtime {
namespace {

// MULTILANE_PORTS: each lane's listener takes the first free port of the range; with every
// port of it taken, the engine fails naming the range.
// Four consecutive free ports below the system's ephemeral range (which starts at 32768 by
// default), where no other test and no outgoing connection takes one meanwhile.
std::uint16_t free_port_block() {
  asio::io_context io;
  const auto loopback = asio::ip::make_address("127.0.0.1");
  for (unsigned first = 21000 + static_cast<unsigned>(::getpid() % 500) * 8; first < 32000;
       first += 8) {
    bool all_free = true;
    for (unsigned port = first; port < first + 4 && all_free; ++port) {
      asio::ip::tcp::acceptor probe(io);
      probe.open(asio::ip::tcp::v4());
      asio::error_code error;
      probe.bind({loopback, static_cast<std::uint16_t>(port)}, error);
      all_free = !error;
    }
    if (all_free) return static_cast<std::uint16_t>(first);
  }
  return 0;
}

TEST(EngineListenPorts, EachLaneTakesTheFirstFreePortOfTheRange) {
  const std::uint16_t first = free_port_block();
  ASSERT_NE(first, 0) << "no four free ports in 21000-32000";
  EngineConfig config = config_of(0);
  config.lane_addresses = {"127.0.0.1", "127.0.0.1"};
  config.listen_port_low = first;
  config.listen_port_high = static_cast<std::uint16_t>(first + 3);
  Engine engine(config);
  const std::vector<std::string> addresses = engine.listening_addresses();
  ASSERT_EQ(addresses.size(), 2u);
  EXPECT_EQ(port_of(addresses[0]), std::to_string(first));
  EXPECT_EQ(port_of(addresses[1]), std::to_string(first + 1));

  // The same range again: two ports are taken, the other two are enough for two lanes, but
  // not for three.
  config.lane_addresses = {"127.0.0.1", "127.0.0.1", "127.0.0.1"};
  try {
    Engine crowded(config);
    ADD_FAILURE() << "a third lane found a port although the range has four and four are used";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  fmt::format("cannot listen on lane 2 address 127.0.0.1: no free port in {}-{} "
                              "(MULTILANE_PORTS)",
                              first, first + 3)),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace multilane::runtime
