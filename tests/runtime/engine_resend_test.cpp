// Engine (runtime/transport/engine.hpp): a stalled WAN stream's share of a split message goes
// out again on the other streams. The sender's four WAN streams go through a proxy that can hold
// one of them (pausing_proxy.hpp), and the sender learns its streams' progress from the proxy,
// as it would see a stalled path. A split message completes long before the held stream moves
// again, byte-exact; a reduction across it combines every byte once; the held stream's late copy
// is read and dropped when it comes, also after its call ended, and the next call's message
// arrives intact over the same streams. A stall that begins after a send completed is
// recovered from the copy of its unacknowledged end that the send kept (the kept tail).
#include <gtest/gtest.h>

#include <atomic>
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
#include "pausing_proxy.hpp"
#include "runtime/exec/chunk_combiner.hpp"
#include "runtime/transport/engine.hpp"

namespace multilane::runtime {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kResendSignature = 0xca11;

EngineConfig wan_config(int rank, bool resend) {
  EngineConfig config;
  config.rank = rank;
  config.size = 2;
  config.job_id = 0x5eed;
  config.secret = JobSecret::from_text("engine resend test");
  config.wan.streams = 4;
  config.wan.socket = {.send_buffer = 64 * 1024, .receive_buffer = 64 * 1024};
  config.stripe = {.threshold = 1024, .max_chunk = 64 * 1024};
  config.timeout = 20s;
  config.resend_stalled = resend;
  return config;
}

std::uint16_t port_of(const Engine& engine) {
  const std::string address = engine.listening_addresses().at(0);
  return static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

// Rank 0 sends to rank 1 over a WAN link whose streams pass a PausingProxy; proxy connection i
// is stream i (the engine connects a link's streams one after another).
struct HeldLink {
  explicit HeldLink(bool resend, EngineConfig sending = wan_config(0, true))
      : receiver(std::make_unique<Engine>(wan_config(1, resend))),
        proxy(port_of(*receiver), 64 * 1024) {
    sending.resend_stalled = resend;
    sending.progress_probe = [this](int fd) {
      StreamProgress progress = proxy.progress(fd);
      // No acknowledgement of stream 0 reaches the sender: all it wrote is in doubt.
      if (acknowledgements_of_0_lost && proxy.carries(0, fd)) progress.unacknowledged += 1ull << 40;
      return progress;
    };
    sender = std::make_unique<Engine>(sending);
    sender->set_peer_addresses(1, {"127.0.0.1:" + std::to_string(proxy.port())});
  }
  ~HeldLink() {
    sender.reset();
    receiver.reset();
  }

  // Message `key` into `bytes` on rank 1, in the background; `landed` as RecvRequest's.
  std::future<std::string> receive(std::span<std::byte> bytes, MessageKey key,
                                   std::function<void(std::uint64_t, std::uint64_t)> landed = {}) {
    auto done = std::make_shared<std::promise<std::string>>();
    auto result = done->get_future();
    Engine& engine = *receiver;
    engine.start_background(
        [&engine, bytes, key, landed = std::move(landed)](Completion completion) {
          const std::uint64_t signature = key.sequence == 0 ? 0 : kResendSignature;
          engine.recv(
              {.peer = 0, .key = key, .signature = signature, .bytes = bytes, .landed = landed},
              std::move(completion));
        },
        [done](const Outcome& error) { done->set_value(testing::text_of(error)); });
    return result;
  }
  std::future<std::string> send(std::span<const std::byte> bytes, MessageKey key) {
    auto done = std::make_shared<std::promise<std::string>>();
    auto result = done->get_future();
    Engine& engine = *sender;
    engine.start_background(
        [&engine, bytes, key](Completion completion) {
          const std::uint64_t signature = key.sequence == 0 ? 0 : kResendSignature;
          engine.send({1, {0}, LinkClass::Wan, key, signature, bytes}, std::move(completion));
        },
        [done](const Outcome& error) { done->set_value(testing::text_of(error)); });
    return result;
  }
  // A split message from rank 0 to rank 1 that connects every stream of the link.
  void warm_up(std::uint64_t message_id) {
    const auto message = testing::pattern(256 * 1024, 77);
    std::vector<std::byte> got(message.size());
    auto received = receive(got, {0, message_id});
    ASSERT_EQ(send(message, {0, message_id}).get(), "");
    ASSERT_EQ(received.get(), "");
    ASSERT_EQ(got, message);
  }

  std::unique_ptr<Engine> receiver;
  testing::PausingProxy proxy;
  std::unique_ptr<Engine> sender;
  std::atomic<bool> acknowledgements_of_0_lost{false};
};

std::string wait(std::future<std::string>& result, std::chrono::seconds most) {
  if (result.wait_for(most) != std::future_status::ready) return "not done in time";
  return result.get();
}

TEST(EngineResend, ASplitMessageCompletesWhileAStreamIsHeld) {
  HeldLink link(true);
  link.warm_up(0);
  EXPECT_EQ(link.sender->send_counters().resent_bytes, 0u);
  link.proxy.pause(0);
  const auto started = std::chrono::steady_clock::now();
  auto message = testing::pattern(8 * 1024 * 1024 + 5, 3);
  const auto expected = message;
  std::vector<std::byte> got(message.size());
  auto received = link.receive(got, {0, 1});
  auto sent = link.send(message, {0, 1});
  EXPECT_EQ(wait(sent, 5s), "");
  // The caller has its buffer back: what the held stream still owes was copied.
  std::fill(message.begin(), message.end(), std::byte{0xee});
  EXPECT_EQ(wait(received, 5s), "");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_TRUE(got == expected);
  const EngineSendCounters counters = link.sender->send_counters();
  EXPECT_GE(counters.stalls, 1u);
  EXPECT_GT(counters.resent_bytes, 0u);
  EXPECT_LT(counters.resent_bytes, expected.size());
  link.proxy.resume(0);
}

// A sender whose watch counts a stream as stalled after 300 ms without progress.
EngineConfig sender_seeing_stalls_soon() {
  EngineConfig sending = wan_config(0, true);
  sending.stall_patience = {std::chrono::milliseconds(300), 4};
  sending.endgame_patience = {std::chrono::milliseconds(300), 4};
  return sending;
}

// Holds stream 0, sends `message` as message {0, 1} into `got` and returns once the send
// completed (before the watch can see the stall), with the receive still under way; the
// caller's buffer is then overwritten, as the caller may.
std::future<std::string> send_past_held_stream_0(HeldLink& link, std::vector<std::byte>& message,
                                                 std::vector<std::byte>& got) {
  link.proxy.pause(0);
  auto received = link.receive(got, {0, 1});
  auto sent = link.send(message, {0, 1});
  EXPECT_EQ(wait(sent, 5s), "");
  std::fill(message.begin(), message.end(), std::byte{0xee});
  return received;
}

// A split message small enough that every frame of it is in the kernel at once: the send
// completes before the watch can see stream 0 stall (it needs 300 ms of no progress), keeping a
// copy of what is not acknowledged yet; once the stall shows, stream 0's share goes again from
// that copy, and the message arrives while the stream is still held.
TEST(EngineResend, AStallAfterTheSendCompletedIsRecoveredFromTheKeptTail) {
  auto message = testing::pattern(160 * 1024 + 7, 21);
  const auto expected = message;
  std::vector<std::byte> got(message.size());  // outlives the engines, also if a check fails
  HeldLink link(true, sender_seeing_stalls_soon());
  link.warm_up(0);
  const EngineSendCounters before = link.sender->send_counters();
  auto received = send_past_held_stream_0(link, message, got);
  EXPECT_EQ(link.sender->send_counters().stalls, before.stalls) << "the send waited for the stall";
  EXPECT_EQ(wait(received, 5s), "");
  EXPECT_TRUE(got == expected);
  const EngineSendCounters after = link.sender->send_counters();
  EXPECT_GT(after.stalls, before.stalls);
  EXPECT_GT(after.resent_bytes, before.resent_bytes);
  EXPECT_LT(after.resent_bytes - before.resent_bytes, expected.size());
  link.proxy.resume(0);
}

// The same stall, but the sending rank ends right after its send returned: destroying its
// engine first sees the kept tail through, so the held stream's share still arrives.
TEST(EngineResend, ASenderEndingRightAfterItsSendStillDeliversTheKeptTail) {
  auto message = testing::pattern(160 * 1024 + 7, 22);
  const auto expected = message;
  std::vector<std::byte> got(message.size());
  HeldLink link(true, sender_seeing_stalls_soon());
  link.warm_up(0);
  auto received = send_past_held_stream_0(link, message, got);
  EXPECT_EQ(link.sender->send_counters().stalls, 0u) << "the send waited for the stall";
  link.sender.reset();
  EXPECT_EQ(wait(received, 5s), "");
  EXPECT_TRUE(got == expected);
  link.proxy.resume(0);
}

TEST(EngineResend, WithoutResendingASplitMessageWaitsForTheHeldStream) {
  // The same message with the option off: complete only once the held stream moves again.
  HeldLink link(false);
  link.warm_up(0);
  link.proxy.pause(0);
  const auto message = testing::pattern(8 * 1024 * 1024 + 5, 3);
  std::vector<std::byte> got(message.size());
  auto received = link.receive(got, {0, 1});
  auto sent = link.send(message, {0, 1});
  EXPECT_EQ(received.wait_for(1500ms), std::future_status::timeout);
  link.proxy.resume(0);
  EXPECT_EQ(wait(received, 10s), "");
  EXPECT_EQ(wait(sent, 10s), "");
  EXPECT_TRUE(got == message);
  EXPECT_EQ(link.sender->send_counters().resent_bytes, 0u);
}

TEST(EngineResend, NothingGoesTwiceWithoutAStall) {
  EngineConfig sending = wan_config(0, true);
  // No stream may count as stalled, also on a busy machine.
  sending.stall_patience = {std::chrono::milliseconds(5000), 4};
  sending.endgame_patience = {std::chrono::milliseconds(5000), 4};
  HeldLink link(true, sending);
  link.warm_up(0);
  for (std::uint64_t id = 1; id <= 3; ++id) {
    const auto message = testing::pattern(4 * 1024 * 1024 + id, static_cast<unsigned>(id));
    std::vector<std::byte> got(message.size());
    auto received = link.receive(got, {0, id});
    auto sent = link.send(message, {0, id});
    EXPECT_EQ(wait(sent, 10s), "");
    EXPECT_EQ(wait(received, 10s), "");
    EXPECT_TRUE(got == message);
  }
  const EngineSendCounters counters = link.sender->send_counters();
  EXPECT_EQ(counters.stalls, 0u);
  EXPECT_EQ(counters.resent_bytes, 0u);
}

TEST(EngineResend, AReductionAcrossAHeldStreamCombinesEveryByteOnce) {
  // Rank 1 adds rank 0's integers to its own as each piece lands (a RecvReduce's receive).
  // Stream 0 delivers its first piece and a part of the next, then is held, and none of its
  // acknowledgements reach the sender: its share goes again, with bytes rank 1 has, so copies
  // overlap what landed. A byte combined twice, or an element cut between pieces combined
  // before its last byte, would show in the sums.
  HeldLink link(true);
  link.warm_up(0);
  link.acknowledgements_of_0_lost = true;
  link.proxy.pause_after_more(0, 100 * 1024);
  const std::size_t count = 6 * 1024 * 1024 + 3;
  std::vector<std::int32_t> theirs(count), ours(count);
  for (std::size_t i = 0; i < count; ++i) {
    theirs[i] = static_cast<std::int32_t>(i * 7 + 1);
    ours[i] = static_cast<std::int32_t>(1000 - i);
  }
  const auto bytes_of = [](std::vector<std::int32_t>& v) {
    return std::as_writable_bytes(std::span(v));
  };
  ChunkCombiner combiner(bytes_of(ours), Reduction{ElementType::Int32, ReduceOp::Sum});
  auto received =
      link.receive(combiner.staging(), {0, 1},
                   [&combiner](std::uint64_t at, std::uint64_t n) { combiner.landed(at, n); });
  auto sent = link.send(std::as_bytes(std::span(theirs)), {0, 1});
  EXPECT_EQ(wait(sent, 5s), "");
  EXPECT_EQ(wait(received, 5s), "");
  EXPECT_GT(link.sender->send_counters().resent_bytes, 0u);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto expected = static_cast<std::int32_t>(i * 7 + 1 + 1000 - i);
    if (ours[i] != expected) ++wrong;
  }
  EXPECT_EQ(wrong, 0u) << "of " << count << " elements";
  link.proxy.resume(0);
}

TEST(EngineResend, ALateCopyAfterItsCallEndedIsDroppedAndTheNextCallArrivesIntact) {
  HeldLink link(true);
  link.warm_up(0);
  Engine& receiver = *link.receiver;
  const auto begin_call = [&](std::uint64_t sequence) {
    testing::on_driving_thread(receiver, [&] {
      EXPECT_FALSE(receiver.begin_call(sequence, kResendSignature, {}).has_value());
    });
  };
  // Call 1's message completes while stream 0 is held, then the call ends on both ranks.
  begin_call(1);
  link.proxy.pause(0);
  const std::uint64_t held_at = link.proxy.forwarded(0);
  const auto first = testing::pattern(8 * 1024 * 1024 + 5, 11);
  std::vector<std::byte> got_first(first.size());
  auto received = link.receive(got_first, {1, 0});
  auto sent = link.send(first, {1, 0});
  EXPECT_EQ(wait(sent, 5s), "");
  EXPECT_EQ(wait(received, 5s), "");
  EXPECT_TRUE(got_first == first);
  EXPECT_GT(link.sender->send_counters().resent_bytes, 0u);
  testing::on_driving_thread(receiver, [&] { receiver.end_call(1); });

  // Each of the following messages arrives whole and exact.
  const auto delivered = [&link](const std::vector<std::byte>& message, MessageKey key) {
    std::vector<std::byte> got(message.size());
    auto arrived = link.receive(got, key);
    auto gone = link.send(message, key);
    EXPECT_EQ(wait(gone, 10s), "");
    EXPECT_EQ(wait(arrived, 10s), "");
    return got == message;
  };
  // The held stream moves again and delivers its copy of call 1's bytes; call 2's message
  // goes over all four streams, stream 0 too.
  link.proxy.resume(0);
  begin_call(2);
  EXPECT_TRUE(delivered(testing::pattern(8 * 1024 * 1024 + 9, 12), {2, 0}));
  EXPECT_GT(link.proxy.forwarded_when_settled(0), held_at) << "the held stream's copy went";
  // And point-to-point traffic goes on too.
  EXPECT_TRUE(delivered(testing::pattern(300'001, 13), {0, 1}));
  // A message below the stripe threshold goes whole on stream (message id mod 4): stream 0,
  // behind what it held.
  EXPECT_TRUE(delivered(testing::pattern(500, 14), {0, 4}));
}

}  // namespace
}  // namespace multilane::runtime
