// tests/runtime/auth_test.cpp — the connection handshake over loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <future>

#include "loopback.hpp"
#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/handshake_messages.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace std::chrono_literals;

// A connected loopback pair, each end on its own io_context (each driven by its own thread).
struct SocketPair {
  asio::io_context listener_io;
  asio::io_context connector_io;
  asio::ip::tcp::socket listener{listener_io};
  asio::ip::tcp::socket connector{connector_io};

  SocketPair() {
    asio::ip::tcp::acceptor acceptor(listener_io, testing::loopback(0));
    connector.connect(acceptor.local_endpoint());
    acceptor.accept(listener);
  }
};

HandshakeConfig config(std::string_view secret, std::uint64_t job = 42) {
  return HandshakeConfig{job, JobSecret::from_text(secret), 2s};
}

// Handshake of both ends at once; returns each end's error text ("" when it succeeded).
std::pair<std::string, std::string> handshake(const HandshakeConfig& listener_config,
                                              const HandshakeConfig& connector_config) {
  SocketPair pair;
  auto run = [](asio::io_context& io, asio::ip::tcp::socket& socket, Role role,
                const HandshakeConfig& c) -> std::string {
    try {
      authenticate(io, socket, role, c);
      return "";
    } catch (const TransportError& e) {
      return e.describe();
    }
  };
  auto connector = testing::in_background(
      [&] { return run(pair.connector_io, pair.connector, Role::Connector, connector_config); });
  std::string listener_error =
      run(pair.listener_io, pair.listener, Role::Listener, listener_config);
  return {listener_error, connector.get()};
}

TEST(Auth, EachEndLearnsTheOthersIdentity) {
  SocketPair pair;
  HandshakeConfig listener_config = config("s3cret");
  HandshakeConfig connector_config = config("s3cret");
  listener_config.identity = 0x1111'2222'3333'4444;
  connector_config.identity = 0xfeed'beef;
  auto connector = testing::in_background([&] {
    return authenticate(pair.connector_io, pair.connector, Role::Connector, connector_config);
  });
  EXPECT_EQ(authenticate(pair.listener_io, pair.listener, Role::Listener, listener_config),
            0xfeed'beefu);
  EXPECT_EQ(connector.get(), 0x1111'2222'3333'4444u);
}

// A relay (wan/relay_server.hpp) says so in its Hello, in either role; others do not.
TEST(Auth, EachEndLearnsWhetherThePeerIsARelay) {
  for (const bool listener_is_relay : {false, true}) {
    SocketPair pair;
    HandshakeConfig listener_config = config("s3cret");
    HandshakeConfig connector_config = config("s3cret");
    listener_config.relay = listener_is_relay;
    connector_config.relay = !listener_is_relay;
    auto connector = testing::in_background([&] {
      return authenticate_peer(pair.connector_io, pair.connector, Role::Connector,
                               connector_config);
    });
    const PeerHello seen_by_listener =
        authenticate_peer(pair.listener_io, pair.listener, Role::Listener, listener_config);
    const PeerHello seen_by_connector = connector.get();
    EXPECT_EQ(seen_by_listener.relay, !listener_is_relay);
    EXPECT_EQ(seen_by_connector.relay, listener_is_relay);
    EXPECT_EQ(seen_by_listener.identity, 0u);
  }
}

TEST(Auth, RightSecretAuthenticatesBothEnds) {
  const auto [listener, connector] = handshake(config("s3cret"), config("s3cret"));
  EXPECT_EQ(listener, "");
  EXPECT_EQ(connector, "");
}

TEST(Auth, WrongSecretFailsOnBothEnds) {
  const auto [listener, connector] = handshake(config("s3cret"), config("guess"));
  EXPECT_THAT(listener, HasSubstr("peer failed authentication (wrong job secret?)"));
  EXPECT_THAT(connector, HasSubstr("peer failed authentication (wrong job secret?)"));
  EXPECT_THAT(listener, StartsWith("authentication: handshake with"));
  EXPECT_THAT(connector, StartsWith("authentication: handshake with"));
  EXPECT_THAT(listener, HasSubstr("handshake with 127.0.0.1:"));
}

TEST(Auth, WrongJobIsRefused) {
  const auto [listener, connector] = handshake(config("s3cret", 1), config("s3cret", 2));
  EXPECT_THAT(listener, HasSubstr("peer is in job 2, expected job 1"));
  EXPECT_THAT(connector, HasSubstr("peer is in job 1, expected job 2"));
  EXPECT_THAT(listener, StartsWith("authentication: "));
}

TEST(Auth, RandomSecretsDiffer) {
  const JobSecret a = JobSecret::random();
  const JobSecret b = JobSecret::random();
  EXPECT_NE(a.key, b.key);
  EXPECT_EQ(JobSecret::from_text("x").key, JobSecret::from_text("x").key);
}

// The listener end against a raw peer that sends `bytes` and then closes (or stays silent):
// the error with its kind, prefixed with "abandoned: " when it is a HandshakeAbandoned.
std::string against_raw_peer(std::vector<std::byte> bytes, bool close_after) {
  SocketPair pair;
  asio::write(pair.connector, asio::buffer(bytes));
  if (close_after) pair.connector.close();
  HandshakeConfig c = config("s3cret");
  c.timeout = 300ms;
  try {
    authenticate(pair.listener_io, pair.listener, Role::Listener, c);
  } catch (const TransportError& e) {
    EXPECT_FALSE(pair.listener.is_open()) << "a failed handshake closes the connection";
    const bool abandoned = dynamic_cast<const HandshakeAbandoned*>(&e) != nullptr;
    return (abandoned ? "abandoned: " : "") + e.describe();
  }
  return "";
}

TEST(Auth, GarbageIsRefused) {
  const std::string error = against_raw_peer(testing::pattern(200), false);
  EXPECT_THAT(error, HasSubstr("not a multilane peer (bad magic 0x"));
  EXPECT_THAT(error, StartsWith("protocol: "));
}

// Sites upgrade separately: a peer of another protocol version is refused naming both versions.
TEST(Auth, AnotherProtocolVersionIsRefusedNamingBoth) {
  Hello hello = make_hello(Role::Connector, config("s3cret"), Nonce{});
  const std::uint16_t other = kProtocolVersion + 1;
  hello[4] = std::byte(other & 0xff);  // the version: little-endian after the 4-byte magic
  hello[5] = std::byte(other >> 8);
  const std::string error =
      against_raw_peer(std::vector<std::byte>(hello.begin(), hello.end()), false);
  EXPECT_THAT(error, StartsWith("authentication: handshake with 127.0.0.1:"));
  EXPECT_THAT(error, HasSubstr(fmt::format("peer speaks protocol version {}, expected {}", other,
                                           kProtocolVersion)));
}

TEST(Auth, TruncatedHelloIsRefused) {
  const std::string error = against_raw_peer(testing::pattern(10), true);
  EXPECT_THAT(error, HasSubstr("peer closed the connection while we were waiting for the peer's "
                               "hello (10 bytes done)"));
  EXPECT_THAT(error, Not(HasSubstr("abandoned: ")));
  EXPECT_THAT(error, StartsWith("peer gone: "));
}

// A process that exits during its handshake closes between two messages: the listener can
// tell that from a stranger's truncated message and need not report it.
TEST(Auth, APeerClosingBetweenMessagesAbandonedTheHandshake) {
  EXPECT_THAT(against_raw_peer({}, true),
              StartsWith("abandoned: peer gone: handshake with 127.0.0.1:"));
  EXPECT_THAT(against_raw_peer({}, true),
              HasSubstr(": peer closed the connection while we were waiting for the peer's hello "
                        "(0 bytes done)"));
}

TEST(Auth, SilentPeerTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(against_raw_peer({}, false), StartsWith("timeout: handshake with 127.0.0.1:"));
  EXPECT_THAT(against_raw_peer({}, false),
              HasSubstr("timed out after 0.3 s waiting for the peer's hello"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

}  // namespace
}  // namespace multilane::runtime
