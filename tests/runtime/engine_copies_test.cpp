// Engine (runtime/transport/engine.hpp): a receive takes copies of bytes (a sender re-sent a
// stalled stream's share on another stream). A raw peer speaks the handshake as rank 0 and
// writes frames by hand on two streams: pieces whose byte ranges overlap and cut elements in
// two, then a late copy of the whole message after its call ended, then the next call's
// message.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "driving.hpp"
#include "loopback.hpp"
#include "multilane/reduction.hpp"
#include "runtime/exec/chunk_combiner.hpp"
#include "runtime/tcp/auth.hpp"
#include "runtime/tcp/stream_identity.hpp"
#include "runtime/tcp/wire.hpp"
#include "runtime/transport/engine.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kCopiesJob = 0xc0b1e5;
constexpr std::uint64_t kCopiesSignature = 0x5171;

EngineConfig receiver_config() {
  EngineConfig config;
  config.rank = 1;
  config.size = 2;
  config.job_id = kCopiesJob;
  config.secret = JobSecret::from_text("engine copies test");
  config.timeout = 20s;
  return config;
}

// Rank 0 by hand: `streams` authenticated connections to rank 1's lane 0.
class RawRank0 {
 public:
  RawRank0(const std::string& address, int streams) {
    const auto colon = address.rfind(':');
    const auto port = static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)));
    for (int s = 0; s < streams; ++s) {
      sockets_.emplace_back(io_);
      sockets_.back().connect(testing::loopback(port));
      const HandshakeConfig handshake{kCopiesJob, receiver_config().secret, 5000ms,
                                      pack_identity({0, 0, s})};
      authenticate(io_, sockets_.back(), Role::Connector, handshake);
    }
  }
  // A frame of message `key` carrying bytes [offset, offset + length) of `message`.
  void write(int stream, MessageKey key, std::span<const std::byte> message, std::uint64_t offset,
             std::uint64_t length, std::uint16_t flags) {
    const FrameBytes header =
        encode_frame_header({flags, kCopiesJob, key.sequence, key.message_id, offset, length,
                             message.size(), kCopiesSignature});
    const std::array<asio::const_buffer, 2> buffers{
        asio::buffer(header), asio::buffer(message.subspan(offset, length).data(), length)};
    asio::write(sockets_.at(stream), buffers);
  }

 private:
  asio::io_context io_;
  std::vector<asio::ip::tcp::socket> sockets_;
};

std::future<std::string> receive(Engine& engine, std::span<std::byte> bytes, MessageKey key,
                                 std::function<void(std::uint64_t, std::uint64_t)> landed = {}) {
  auto done = std::make_shared<std::promise<std::string>>();
  auto result = done->get_future();
  engine.start_background(
      [&engine, bytes, key, landed = std::move(landed)](Completion completion) {
        engine.recv({.peer = 0,
                     .key = key,
                     .signature = kCopiesSignature,
                     .bytes = bytes,
                     .landed = landed},
                    std::move(completion));
      },
      [done](const Outcome& error) { done->set_value(testing::text_of(error)); });
  return result;
}

TEST(EngineCopies, OverlappingPiecesAreCombinedOnceAndALateCopyIsDropped) {
  Engine receiver(receiver_config());
  RawRank0 sender(receiver.listening_addresses().at(0), 2);
  testing::on_driving_thread(receiver, [&] {
    EXPECT_FALSE(receiver.begin_call(1, kCopiesSignature, {}).has_value());
    EXPECT_FALSE(receiver.begin_call(2, kCopiesSignature, {}).has_value());
  });

  // Rank 1 adds rank 0's 1000 integers to its own as pieces land.
  std::vector<std::int32_t> theirs(1000), ours(1000);
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    theirs[i] = static_cast<std::int32_t>(3 * i + 7);
    ours[i] = static_cast<std::int32_t>(100'000 - i);
  }
  const auto message = std::as_bytes(std::span(theirs));
  ChunkCombiner combiner(std::as_writable_bytes(std::span(ours)),
                         Reduction{ElementType::Int32, ReduceOp::Sum});
  auto received =
      receive(receiver, combiner.staging(), {1, 0},
              [&combiner](std::uint64_t at, std::uint64_t n) { combiner.landed(at, n); });
  // [0, 2002) and a copy of [1001, 3003): 4004 bytes arrived, 3003 of them distinct, cut
  // inside elements 250, 500 and 750.
  sender.write(0, {1, 0}, message, 0, 2002, kFrameStriped);
  sender.write(1, {1, 0}, message, 1001, 2002, kFrameStriped | kFrameResent);
  EXPECT_EQ(received.wait_for(300ms), std::future_status::timeout)
      << "complete with bytes 3003..4000 missing: " << received.get();
  sender.write(0, {1, 0}, message, 3003, 997, kFrameStriped);
  ASSERT_EQ(received.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(received.get(), "");
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (ours[i] != static_cast<std::int32_t>(3 * i + 7 + 100'000 - i)) ++wrong;
  }
  EXPECT_EQ(wrong, 0u) << "elements combined other than once";

  // Call 1 ends; a late copy of its message comes, and then call 2's on the same stream.
  testing::on_driving_thread(receiver, [&] { receiver.end_call(1); });
  sender.write(1, {1, 0}, message, 0, message.size(), kFrameStriped | kFrameResent);
  const auto next = testing::pattern(5000, 9);
  sender.write(1, {2, 0}, next, 0, next.size(), 0);
  std::vector<std::byte> got(next.size());
  auto second = receive(receiver, got, {2, 0});
  ASSERT_EQ(second.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(second.get(), "");
  EXPECT_EQ(got, next);
}

}  // namespace
}  // namespace multilane::runtime
