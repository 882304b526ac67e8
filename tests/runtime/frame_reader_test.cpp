// tests/runtime/frame_reader_test.cpp — the per-stream frame reader shared by the Engine and
// StreamSet, over a loopback connection: placement, dropping, parking, bad headers, the peer's
// close between and inside frames, and stopping a payload half way.
#include "runtime/tcp/frame_reader.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/loopback.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {
namespace {

using testing::loopback;
using testing::pattern;

constexpr std::uint64_t kJob = 42;
const FrameCheck kCheck{kJob, std::uint64_t{1} << 32};

FrameHeader header(std::uint64_t message_id, std::uint64_t offset, std::uint64_t length,
                   std::uint64_t total) {
  return {
      .job_id = kJob, .message_id = message_id, .offset = offset, .length = length, .total = total};
}

// Records what the reader reports; `on_place` and `on_landed` say what to do.
struct Recorder final : FrameSink {
  std::function<FramePlacement(FrameReader&, const FrameHeader&)> on_place;
  std::function<void(FrameReader&)> on_landed;
  std::vector<FrameHeader> placed;
  std::vector<FrameHeader> done;
  std::uint64_t landed_bytes = 0;
  std::vector<std::pair<std::uint64_t, std::size_t>> landings;  // (offset, bytes)
  std::string bad;
  std::optional<asio::error_code> end_error;
  bool between_frames = false;

  FramePlacement place(FrameReader& reader, const FrameHeader& h) override {
    placed.push_back(h);
    return on_place(reader, h);
  }
  void landed(FrameReader& reader, const FrameHeader&, std::uint64_t offset,
              std::size_t bytes) override {
    landings.emplace_back(offset, bytes);
    landed_bytes += bytes;
    if (on_landed) on_landed(reader);
  }
  void frame_done(FrameReader&, const FrameHeader& h) override { done.push_back(h); }
  void bad_header(FrameReader&, const std::string& error) override { bad = error; }
  void ended(FrameReader&, const asio::error_code& error, bool between) override {
    end_error = error;
    between_frames = between;
  }
};

// Message 0, whose payload is stopped after its first bytes, then message 1, read whole.
struct StoppedFrame {
  std::vector<std::byte> first = pattern(50'000, 3);
  std::vector<std::byte> second = pattern(20, 4);
  std::vector<std::byte> buffer = std::vector<std::byte>(first.size(), std::byte{0xee});
  std::vector<std::byte> next = std::vector<std::byte>(second.size());

  FramePlacement place(const FrameHeader& h) {
    return FramePlacement::read(h.message_id == 0 ? std::span(buffer) : std::span(next));
  }
  // Message 1 is in; of message 0 only the first `kept` bytes landed.
  void expect_kept(const Recorder& sink, std::uint64_t kept) const {
    ASSERT_EQ(sink.done.size(), 1u);
    EXPECT_EQ(sink.done[0].message_id, 1u);  // the stopped frame is not done
    EXPECT_EQ(next, second);
    EXPECT_EQ(sink.landed_bytes, kept + second.size());
    EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + kept, first.begin()));
    EXPECT_TRUE(std::all_of(buffer.begin() + kept, buffer.end(),
                            [](std::byte b) { return b == std::byte{0xee}; }));
  }
};

class FrameReaderTest : public ::testing::Test {
 protected:
  FrameReaderTest() {
    asio::ip::tcp::acceptor acceptor(io, loopback(0));
    writer.connect(acceptor.local_endpoint());
    socket = acceptor.accept();
  }

  void write(std::span<const std::byte> bytes) {
    asio::write(writer, asio::buffer(bytes.data(), bytes.size()));
  }
  void write_header(const FrameHeader& h) { write(encode_frame_header(h)); }
  // Payloads go where `frames` places them.
  void place_into(StoppedFrame& frames) {
    sink.on_place = [&frames](FrameReader&, const FrameHeader& h) { return frames.place(h); };
  }
  // Message 0's header and first 100 bytes; then the rest of it and message 1.
  void write_start(const StoppedFrame& frames) {
    write_frame(header(0, 0, frames.first.size(), frames.first.size()),
                std::span(frames.first).first(100));
  }
  void write_rest(const StoppedFrame& frames) {
    write(std::span(frames.first).subspan(100));
    write_frame(header(1, 0, frames.second.size(), frames.second.size()), frames.second);
  }
  void write_frame(const FrameHeader& h, std::span<const std::byte> payload) {
    write_header(h);
    write(payload);
  }

  // Runs the reader until `done` holds (at most 10 s).
  template <typename Pred>
  bool run_until(Pred done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      io.restart();
      io.run_one_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  // Lets whatever is ready run, for a moment.
  void settle() {
    io.restart();
    io.run_for(std::chrono::milliseconds(50));
  }

  asio::io_context io;
  asio::ip::tcp::socket socket{io};
  asio::ip::tcp::socket writer{io};
  std::vector<std::byte> scratch;
  Recorder sink;
  FrameReader reader{socket, kCheck, "test stream", sink, scratch};
};

TEST_F(FrameReaderTest, PlacedFramesArriveByteExact) {
  // A message of two frames, the second one large enough to take several reads.
  const std::size_t total = 4 << 20;
  const std::vector<std::byte> message = pattern(total);
  std::vector<std::byte> buffer(total);
  sink.on_place = [&](FrameReader&, const FrameHeader& h) {
    return FramePlacement::read(std::span(buffer).subspan(h.offset, h.length));
  };
  reader.start();
  std::thread sender([&] {
    write_frame(header(0, 0, 1000, total), std::span(message).first(1000));
    write_frame(header(0, 1000, total - 1000, total), std::span(message).subspan(1000));
  });
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 2; }));
  sender.join();
  EXPECT_EQ(buffer, message);
  EXPECT_EQ(sink.done[0], header(0, 0, 1000, total));
  EXPECT_EQ(sink.done[1], header(0, 1000, total - 1000, total));
  EXPECT_EQ(sink.landed_bytes, total);
  // Each frame's landings follow each other from its start.
  std::uint64_t expected = 0;
  for (const auto& [offset, bytes] : sink.landings) {
    if (expected == 1000 && offset == 0) expected = 0;  // the second frame
    EXPECT_EQ(offset, expected);
    expected = offset + bytes;
  }
}

// Whether the kernel acknowledges this socket's data at once (false: in TCP's interactive mode,
// where acknowledgements wait for data to ride on).
bool acknowledges_at_once(asio::ip::tcp::socket& socket) {
  int on = 0;
  socklen_t size = sizeof on;
  ::getsockopt(socket.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &on, &size);
  return on != 0;
}

TEST_F(FrameReaderTest, ALargePayloadIsAcknowledgedAtOnce) {
  // The socket starts in the interactive mode a ping-pong puts it in; reading a payload of
  // kQuickAcknowledgedPayload bytes takes it out before the first bytes land.
  const int off = 0;
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &off, sizeof off);
  ASSERT_FALSE(acknowledges_at_once(socket));
  const std::size_t size = FrameReader::kQuickAcknowledgedPayload;
  const std::vector<std::byte> message = pattern(size, 3);
  std::vector<std::byte> buffer(size);
  std::optional<bool> at_first_landing;
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  sink.on_landed = [&](FrameReader&) {
    if (!at_first_landing) at_first_landing = acknowledges_at_once(socket);
  };
  reader.start();
  std::thread sender([&] { write_frame(header(0, 0, size, size), message); });
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  sender.join();
  EXPECT_EQ(buffer, message);
  EXPECT_EQ(at_first_landing, std::optional<bool>(true));
}

TEST_F(FrameReaderTest, EmptyFrameIsDoneWithoutARead) {
  sink.on_place = [](FrameReader&, const FrameHeader&) { return FramePlacement::read({}); };
  reader.start();
  write_header(header(3, 0, 0, 0));
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  EXPECT_TRUE(sink.landings.empty());
}

TEST_F(FrameReaderTest, DiscardDropsExactlyTheFramesBytes) {
  const std::vector<std::byte> dropped = pattern(200'000, 1);
  const std::vector<std::byte> kept = pattern(300, 2);
  std::vector<std::byte> buffer(300);
  sink.on_place = [&](FrameReader&, const FrameHeader& h) {
    if (h.message_id == 0) return FramePlacement::discard();
    return FramePlacement::read(buffer);
  };
  reader.start();
  std::thread sender([&] {
    write_frame(header(0, 0, dropped.size(), dropped.size()), dropped);
    write_frame(header(1, 0, kept.size(), kept.size()), kept);
  });
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  sender.join();
  EXPECT_EQ(sink.done[0].message_id, 1u);
  EXPECT_EQ(buffer, kept);
  EXPECT_EQ(sink.landed_bytes, kept.size());
  EXPECT_EQ(sink.placed.size(), 2u);
}

TEST_F(FrameReaderTest, ParkedFrameWaitsForResume) {
  const std::vector<std::byte> payload = pattern(500);
  std::vector<std::byte> buffer(500);
  bool ready = false;
  sink.on_place = [&](FrameReader&, const FrameHeader&) {
    return ready ? FramePlacement::read(buffer) : FramePlacement::park();
  };
  reader.start();
  write_frame(header(7, 0, payload.size(), payload.size()), payload);
  EXPECT_TRUE(run_until([&] { return reader.parked(); }));
  EXPECT_EQ(reader.header().message_id, 7u);
  settle();
  EXPECT_TRUE(sink.done.empty());
  EXPECT_FALSE(reader.busy());
  reader.start();  // does nothing while parked
  EXPECT_FALSE(reader.busy());

  ready = true;
  reader.resume();
  EXPECT_FALSE(reader.parked());
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  EXPECT_EQ(buffer, payload);
  EXPECT_EQ(sink.placed.size(), 2u);  // asked again on resume()
}

TEST_F(FrameReaderTest, StopPlacementLeavesTheReaderIdleUntilStarted) {
  const std::vector<std::byte> payload = pattern(10);
  std::vector<std::byte> buffer(10);
  int calls = 0;
  sink.on_place = [&](FrameReader&, const FrameHeader&) {
    return ++calls == 1 ? FramePlacement::stop() : FramePlacement::read(buffer);
  };
  reader.start();
  write_header(header(0, 0, 0, 0));
  write_frame(header(1, 0, payload.size(), payload.size()), payload);
  EXPECT_TRUE(run_until([&] { return calls == 1; }));
  settle();
  EXPECT_FALSE(reader.busy());
  EXPECT_EQ(calls, 1);
  reader.start();
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  EXPECT_EQ(buffer, payload);
}

TEST_F(FrameReaderTest, BadHeaderIsRefusedWithTheDecodeError) {
  FrameBytes bytes = encode_frame_header(header(0, 0, 0, 0));
  bytes[0] = std::byte{0x00};  // not the magic
  sink.on_place = [](FrameReader&, const FrameHeader&) { return FramePlacement::discard(); };
  reader.start();
  write(bytes);
  EXPECT_TRUE(run_until([&] { return !sink.bad.empty(); }));
  EXPECT_EQ(sink.bad, decode_frame_header(bytes, kCheck, "test stream").error);
  EXPECT_NE(sink.bad.find("test stream"), std::string::npos);
  EXPECT_TRUE(sink.placed.empty());
  reader.start();  // the stream is out of step: it stays ended
  EXPECT_FALSE(reader.busy());
}

TEST_F(FrameReaderTest, OwnerMayRefuseAHeader) {
  struct Refusing final : FrameSink {
    int admitted = 0;
    bool admit(FrameReader&, const FrameHeader&) override { return ++admitted, false; }
    FramePlacement place(FrameReader&, const FrameHeader&) override {
      ADD_FAILURE() << "a refused frame is not placed";
      return FramePlacement::discard();
    }
    void frame_done(FrameReader&, const FrameHeader&) override {}
    void bad_header(FrameReader&, const std::string&) override {}
    void ended(FrameReader&, const asio::error_code&, bool) override {}
  } refusing;
  FrameReader refuser{socket, kCheck, "test stream", refusing, scratch};
  refuser.start();
  write_header(header(0, 0, 0, 0));
  EXPECT_TRUE(run_until([&] { return refusing.admitted == 1; }));
  EXPECT_FALSE(refuser.busy());
}

TEST_F(FrameReaderTest, PeerClosingBetweenFramesIsReportedSo) {
  const std::vector<std::byte> payload = pattern(100);
  std::vector<std::byte> buffer(100);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  reader.start();
  write_frame(header(0, 0, payload.size(), payload.size()), payload);
  writer.close();
  EXPECT_TRUE(run_until([&] { return sink.end_error.has_value(); }));
  EXPECT_EQ(sink.done.size(), 1u);
  EXPECT_EQ(*sink.end_error, asio::error::eof);
  EXPECT_TRUE(sink.between_frames);
}

TEST_F(FrameReaderTest, PeerClosingInsideAPayloadIsReportedSo) {
  const std::vector<std::byte> payload = pattern(1000);
  std::vector<std::byte> buffer(1000);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  reader.start();
  write_frame(header(0, 0, 1000, 1000), std::span(payload).first(400));
  writer.close();
  EXPECT_TRUE(run_until([&] { return sink.end_error.has_value(); }));
  EXPECT_TRUE(sink.done.empty());
  EXPECT_EQ(sink.landed_bytes, 400u);
  EXPECT_EQ(*sink.end_error, asio::error::eof);
  EXPECT_FALSE(sink.between_frames);
}

TEST_F(FrameReaderTest, PeerClosingInsideAHeaderIsReportedSo) {
  sink.on_place = [](FrameReader&, const FrameHeader&) { return FramePlacement::discard(); };
  reader.start();
  const FrameBytes bytes = encode_frame_header(header(0, 0, 0, 0));
  write(std::span(bytes).first(10));
  writer.close();
  EXPECT_TRUE(run_until([&] { return sink.end_error.has_value(); }));
  EXPECT_EQ(*sink.end_error, asio::error::eof);
  EXPECT_FALSE(sink.between_frames);
}

TEST_F(FrameReaderTest, StopPayloadFromLandedDropsTheRest) {
  StoppedFrame frames;
  place_into(frames);
  sink.on_landed = [](FrameReader& r) { r.stop_payload(); };
  reader.start();
  write_start(frames);
  EXPECT_TRUE(run_until([&] { return sink.landed_bytes > 0; }));
  sink.on_landed = nullptr;
  const std::uint64_t kept = sink.landed_bytes;
  write_rest(frames);
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  frames.expect_kept(sink, kept);
}

TEST_F(FrameReaderTest, StopPayloadCancelsAnOutstandingRead) {
  StoppedFrame frames;
  place_into(frames);
  reader.start();
  write_start(frames);
  EXPECT_TRUE(run_until([&] { return sink.landed_bytes == 100; }));
  settle();
  ASSERT_TRUE(reader.busy());  // waiting for the rest, into the buffer
  reader.stop_payload();
  settle();
  write_rest(frames);
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  frames.expect_kept(sink, 100);
}

TEST_F(FrameReaderTest, ClosingTheSocketEndsTheReaderSilently) {
  sink.on_place = [](FrameReader&, const FrameHeader&) { return FramePlacement::discard(); };
  reader.start();
  settle();
  ASSERT_TRUE(reader.busy());
  socket.close();
  EXPECT_TRUE(run_until([&] { return !reader.busy(); }));
  EXPECT_FALSE(sink.end_error.has_value());
}

// A reader given PolledReaders, as the engine's incoming streams are: while a caller spins, a
// reader whose socket ran empty, between frames or inside a payload, is read by that caller's
// poll() instead of through the reactor.
class PolledFrameReaderTest : public FrameReaderTest {
 protected:
  PolledFrameReaderTest() { polled.start_polling(); }

  // Spins as Engine::drive_until_finished does until `done` holds (at most 10 s); counts the
  // polls that read something.
  template <typename Pred>
  bool spin_until(Pred done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      if (poll()) ++polled_reads;
      io.restart();
      io.poll_one();
    }
    return true;
  }
  // One round of the spinning caller's reads.
  bool poll() {
    ++polls;
    return polled.poll();
  }

  PolledReaders polled;
  FrameReader polled_reader{socket, kCheck, "polled stream", sink, scratch, 0, &polled};
  int polled_reads = 0;
  unsigned polls = 0;  // rounds of `polled` so far
};

TEST_F(PolledFrameReaderTest, APayloadArrivingInPiecesIsReadByTheSpinningCaller) {
  const std::size_t size = 300'000;
  const std::vector<std::byte> message = pattern(size, 8);
  std::vector<std::byte> buffer(size);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  polled_reader.start();
  write_frame(header(0, 0, size, size), std::span(message).first(1000));
  ASSERT_TRUE(spin_until([&] { return sink.landed_bytes == 1000; }));
  const int before = polled_reads;
  for (const std::size_t end : {std::size_t{100'000}, std::size_t{200'000}, size}) {
    EXPECT_FALSE(polled_reader.busy()) << "an empty socket inside a payload is left to polling";
    write(std::span(message).subspan(sink.landed_bytes, end - sink.landed_bytes));
    ASSERT_TRUE(spin_until([&] { return sink.landed_bytes == end; }));
  }
  EXPECT_EQ(sink.done.size(), 1u);
  EXPECT_EQ(buffer, message);
  EXPECT_GE(polled_reads - before, 3);
}

TEST_F(PolledFrameReaderTest, StopPayloadOfAPolledReaderDropsTheRest) {
  StoppedFrame frames;
  place_into(frames);
  polled_reader.start();
  write_start(frames);
  ASSERT_TRUE(spin_until([&] { return sink.landed_bytes == 100; }));
  ASSERT_FALSE(polled_reader.busy());  // listed for polling, no read outstanding
  polled_reader.stop_payload();
  write_rest(frames);
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 1; }));
  frames.expect_kept(sink, 100);
}

TEST_F(PolledFrameReaderTest, APayloadReaderHandedBackToTheReactorGoesOn) {
  // The spinning caller stops polling (it is about to sleep): the listed reader waits through
  // the reactor again, and the rest of its payload lands without any poll().
  const std::vector<std::byte> message = pattern(50'000, 9);
  std::vector<std::byte> buffer(message.size());
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  polled_reader.start();
  write_frame(header(0, 0, message.size(), message.size()), std::span(message).first(100));
  ASSERT_TRUE(spin_until([&] { return sink.landed_bytes == 100; }));
  polled.stop_polling();
  EXPECT_TRUE(polled_reader.busy());
  write(std::span(message).subspan(100));
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 1; }));
  EXPECT_EQ(buffer, message);
}

// Readiness events of `socket` as a second reactor (an epoll set of its own) would hear them.
class ReadinessWatch {
 public:
  explicit ReadinessWatch(asio::ip::tcp::socket& socket) {
    epoll_event event{};
    event.events = EPOLLIN | EPOLLET;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, socket.native_handle(), &event);
  }
  ~ReadinessWatch() { ::close(epoll_); }
  ReadinessWatch(const ReadinessWatch&) = delete;
  ReadinessWatch& operator=(const ReadinessWatch&) = delete;
  // Whether the socket was reported readable since the last call (waits up to 50 ms).
  bool signalled() {
    epoll_event event{};
    return ::epoll_wait(epoll_, &event, 1, 50) == 1;
  }

 private:
  int epoll_ = ::epoll_create1(0);
};

TEST_F(PolledFrameReaderTest, ArrivalsOnAListedReadersSocketDoNotWakeTheReactor) {
  // The spinning caller reads a listed socket itself; the kernel then skips the wake-up that
  // every arrival would cost the sender, until the reader is handed back to the reactor.
  ReadinessWatch watch(socket);
  std::vector<std::byte> buffer(8);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  polled_reader.start();
  write_frame(header(0, 0, 8, 8), pattern(8, 1));
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 1; }));
  ASSERT_FALSE(polled_reader.busy());  // listed: the socket is empty
  watch.signalled();                   // forget the events of the first frame
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  EXPECT_FALSE(watch.signalled()) << "a small arrival on a listed socket woke the reactor";
  polled.stop_polling();
  EXPECT_TRUE(watch.signalled()) << "the bytes already there are reported at the hand-back";
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 2; }));
  EXPECT_EQ(buffer, pattern(8, 2));
}

TEST_F(PolledFrameReaderTest, AListedReaderDestroyedLeavesItsSocketSignallingArrivals) {
  std::vector<std::byte> buffer(8);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  {
    FrameReader listed{socket, kCheck, "short-lived stream", sink, scratch, 0, &polled};
    listed.start();
    write_frame(header(0, 0, 8, 8), pattern(8, 1));
    ASSERT_TRUE(spin_until([&] { return sink.done.size() == 1; }));
    ASSERT_FALSE(listed.busy());  // listed
  }
  ReadinessWatch watch(socket);
  watch.signalled();
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  EXPECT_TRUE(watch.signalled()) << "whoever reads the socket next would not hear of it";
}

TEST_F(PolledFrameReaderTest, AHeaderReaderHandedBackToTheReactorReadsTheNextSmallFrame) {
  std::vector<std::byte> buffer(8);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  polled_reader.start();
  write_frame(header(0, 0, 8, 8), pattern(8, 1));
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 1; }));
  polled.stop_polling();
  EXPECT_TRUE(polled_reader.busy());  // waiting through the reactor
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  EXPECT_TRUE(run_until([&] { return sink.done.size() == 2; }));
  EXPECT_EQ(buffer, pattern(8, 2));
}

TEST_F(PolledFrameReaderTest, AReaderWhoseStageFilledUpReadsOnThroughTheReactor) {
  // Frames that fill the stage exactly: the socket may hold more, so the next read goes
  // through the reactor, and must hear of a small frame that comes later.
  constexpr std::size_t kFrame = 128;
  constexpr std::size_t kPayload = kFrame - kFrameHeaderSize;
  static_assert(FrameReader::kStageBytes % kFrame == 0);
  std::vector<std::byte> buffer(kPayload);
  sink.on_place = [&](FrameReader&, const FrameHeader&) { return FramePlacement::read(buffer); };
  polled_reader.start();
  write_frame(header(0, 0, kPayload, kPayload), pattern(kPayload, 1));
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 1; }));
  ASSERT_FALSE(polled_reader.busy());  // listed
  std::vector<std::byte> stage_full;
  const std::size_t frames = FrameReader::kStageBytes / kFrame;
  for (std::uint64_t id = 1; id <= frames; ++id) {
    const FrameBytes h = encode_frame_header(header(id, 0, kPayload, kPayload));
    stage_full.insert(stage_full.end(), h.begin(), h.end());
    const std::vector<std::byte> payload = pattern(kPayload, static_cast<unsigned>(id));
    stage_full.insert(stage_full.end(), payload.begin(), payload.end());
  }
  write(stage_full);
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 1 + frames; }));
  write_frame(header(frames + 1, 0, kPayload, kPayload), pattern(kPayload, 99));
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 2 + frames; }));
  EXPECT_EQ(buffer, pattern(kPayload, 99));
}

// A reader that follows its stream's demand, as the engine's incoming streams do: the spinning
// caller reads it while a receive waits for its frames, one frame at a time where this rank
// sends to the peer between them.
class DemandFrameReaderTest : public PolledFrameReaderTest {
 protected:
  DemandFrameReaderTest() {
    polled_reader.follow_demand(demand);
    sink.on_place = [this](FrameReader&, const FrameHeader&) {
      return FramePlacement::read(buffer);
    };
  }
  // Bytes that arrived on the reader's socket and were not read yet.
  int unread() {
    int bytes = -1;
    ::ioctl(socket.native_handle(), FIONREAD, &bytes);
    return bytes;
  }
  // Waits (at most 10 s) until the socket holds `bytes` unread bytes.
  bool arrived(int bytes) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (unread() != bytes) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
  // A first frame of 8 bytes, read while one receive waits, after a send of this rank to the
  // peer: the reader is listed afterwards.
  void first_frame() {
    demand.waiting = 1;
    ++demand.sends;
    polled_reader.start();
    write_frame(header(0, 0, 8, 8), pattern(8, 1));
    ASSERT_TRUE(spin_until([&] { return sink.done.size() == 1; }));
    ASSERT_FALSE(polled_reader.busy());  // listed
  }

  static constexpr int kFrame = static_cast<int>(kFrameHeaderSize) + 8;
  StreamDemand demand;
  std::vector<std::byte> buffer = std::vector<std::byte>(8);
};

TEST_F(DemandFrameReaderTest, AFrameNobodyWaitsForStaysInTheKernelUntilAnEveryReaderRound) {
  first_frame();
  demand.waiting = 0;  // that receive completed
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  ASSERT_TRUE(arrived(kFrame));
  while ((polls + 1) % PolledReaders::kEveryReaderRound != 0) {
    EXPECT_FALSE(poll()) << "round " << polls << " read a frame that nobody waits for";
  }
  EXPECT_EQ(unread(), kFrame);
  EXPECT_TRUE(poll()) << "the every-reader round reads it";  // so early data still moves
  EXPECT_EQ(unread(), 0);
  ASSERT_EQ(sink.done.size(), 2u);
  EXPECT_EQ(buffer, pattern(8, 2));
}

TEST_F(DemandFrameReaderTest, AFrameIsReadInTheFirstRoundAfterItsReceiveIsPosted) {
  first_frame();
  demand.waiting = 0;
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  ASSERT_TRUE(arrived(kFrame));
  if ((polls + 1) % PolledReaders::kEveryReaderRound == 0) {
    EXPECT_TRUE(poll());
    return;  // this round reads every reader: the other tests cover it
  }
  EXPECT_EQ(unread(), kFrame);
  demand.waiting = 1;  // its receive is posted
  EXPECT_TRUE(poll());
  EXPECT_EQ(unread(), 0);
  ASSERT_EQ(sink.done.size(), 2u);
  EXPECT_EQ(buffer, pattern(8, 2));
}

TEST_F(DemandFrameReaderTest, TheFrameAfterTheAwaitedOneStaysInTheKernel) {
  first_frame();
  // Frames 1 and 2 arrive together; frame 1 completes the only receive.
  sink.on_landed = [this](FrameReader&) { demand.waiting = 0; };
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  write_frame(header(2, 0, 8, 8), pattern(8, 3));
  ASSERT_TRUE(arrived(2 * kFrame));
  do {
    poll();
    io.restart();
    io.poll();  // the reader's own handlers, as the spinning caller runs them
  } while ((polls + 1) % PolledReaders::kEveryReaderRound != 0);
  ASSERT_EQ(sink.done.size(), 2u);
  EXPECT_EQ(buffer, pattern(8, 2));
  EXPECT_EQ(unread(), kFrame) << "frame 2 was read before a receive waited for it";
  EXPECT_FALSE(polled_reader.busy());  // listed, for when one does
}

TEST_F(DemandFrameReaderTest, AFrameTheReactorReportsWhileNobodyWaitsIsLeftToTheCaller) {
  first_frame();
  demand.waiting = 0;
  polled.stop_polling();  // the caller sleeps: the reader waits through the reactor
  ASSERT_TRUE(polled_reader.busy());
  write_frame(header(1, 0, 8, 8), pattern(8, 2));
  ASSERT_TRUE(arrived(kFrame));
  polled.start_polling();  // and spins again before the reactor's report is handled
  io.restart();
  io.run_one_for(std::chrono::seconds(10));
  EXPECT_FALSE(polled_reader.busy());  // listed
  EXPECT_EQ(unread(), kFrame);
  demand.waiting = 1;
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 2; }));
  EXPECT_EQ(buffer, pattern(8, 2));
}

TEST_F(DemandFrameReaderTest, EachPolledReadTakesOneFrameOfThePreviousFramesSize) {
  // Two small frames drained by one read make the kernel acknowledge at once; one frame per
  // read leaves the acknowledgement to this rank's next frame.
  first_frame();
  demand.waiting = 2;
  std::vector<std::byte> both;
  for (std::uint64_t id : {1, 2}) {
    const FrameBytes h = encode_frame_header(header(id, 0, 8, 8));
    both.insert(both.end(), h.begin(), h.end());
    const std::vector<std::byte> payload = pattern(8, static_cast<unsigned>(id) + 1);
    both.insert(both.end(), payload.begin(), payload.end());
  }
  write(both);
  ASSERT_TRUE(arrived(2 * kFrame));
  EXPECT_TRUE(poll());
  EXPECT_EQ(unread(), kFrame) << "the read took more than one frame";
  ASSERT_EQ(sink.done.size(), 2u);
  EXPECT_EQ(buffer, pattern(8, 2));
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 3; }));
  EXPECT_EQ(unread(), 0);
  EXPECT_EQ(buffer, pattern(8, 3));
}

TEST_F(DemandFrameReaderTest, FramesOfAPeerThatThisRankDoesNotAnswerAreReadTogether) {
  // A stream one way (a gather's root): nothing of this rank's would carry the
  // acknowledgement, and one read takes what is there.
  first_frame();
  ++demand.sends;
  write_frame(header(1, 0, 8, 8), pattern(8, 2));  // an answer to this send
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 2; }));
  demand.waiting = 2;  // no send since: frames 2 and 3 come one way
  write_frame(header(2, 0, 8, 8), pattern(8, 3));
  write_frame(header(3, 0, 8, 8), pattern(8, 4));
  ASSERT_TRUE(arrived(2 * kFrame));
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 3; }));
  EXPECT_EQ(unread(), kFrame) << "frame 3 came after an answered frame: read alone";
  ASSERT_TRUE(spin_until([&] { return sink.done.size() == 4; }));
  write_frame(header(4, 0, 8, 8), pattern(8, 5));
  write_frame(header(5, 0, 8, 8), pattern(8, 6));
  ASSERT_TRUE(arrived(2 * kFrame));
  EXPECT_TRUE(poll());
  EXPECT_EQ(unread(), 0) << "one read takes both frames of a stream one way";
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 6; }));
  EXPECT_EQ(buffer, pattern(8, 6));
}

TEST_F(DemandFrameReaderTest, AFrameLargerThanThePreviousOneArrivesWhole) {
  first_frame();
  ++demand.sends;
  const std::vector<std::byte> larger = pattern(3000, 7);
  buffer.assign(larger.size(), std::byte{0});
  write_frame(header(1, 0, larger.size(), larger.size()), larger);
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 2; }));
  EXPECT_EQ(buffer, larger);
  buffer.assign(8, std::byte{0});  // and a smaller one after it
  write_frame(header(2, 0, 8, 8), pattern(8, 8));
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 3; }));
  EXPECT_EQ(buffer, pattern(8, 8));
}

// A listed reader gets a header whose payload comes later: the payload is read (or dropped)
// through the reactor, which must hear of its bytes.
class LatePayloadTest : public PolledFrameReaderTest {
 protected:
  // Reads a first frame, so that the reader is listed, then sends message 1's header alone.
  void header_alone(std::size_t payload) {
    polled_reader.start();
    write_frame(header(0, 0, 0, 0), {});
    ASSERT_TRUE(spin_until([&] { return sink.placed.size() == 1; }));
    ASSERT_FALSE(polled_reader.busy());  // listed
    write_header(header(1, 0, payload, payload));
    ASSERT_TRUE(spin_until([&] { return sink.placed.size() == 2; }));
  }
};

TEST_F(LatePayloadTest, APayloadThatComesAfterItsHeaderLands) {
  const std::vector<std::byte> message = pattern(1000, 4);
  std::vector<std::byte> buffer(message.size());
  sink.on_place = [&](FrameReader&, const FrameHeader& h) {
    return FramePlacement::read(std::span(buffer).first(h.length));
  };
  header_alone(message.size());
  write(message);
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 2; }));
  EXPECT_EQ(buffer, message);
}

TEST_F(LatePayloadTest, ADroppedPayloadThatComesAfterItsHeaderIsReadPast) {
  std::vector<std::byte> buffer(8);
  sink.on_place = [&](FrameReader&, const FrameHeader& h) {
    if (h.message_id == 1) return FramePlacement::discard();
    return FramePlacement::read(std::span(buffer).first(h.length));
  };
  header_alone(1000);
  write(pattern(1000, 4));
  write_frame(header(2, 0, 8, 8), pattern(8, 5));
  EXPECT_TRUE(spin_until([&] { return sink.done.size() == 2; }));
  EXPECT_EQ(sink.done.back().message_id, 2u);
  EXPECT_EQ(buffer, pattern(8, 5));
}

// Many small frames sent in one write arrive whole, in order, each with its prefix (the
// routers' route header): the stage holds several frames at once.
TEST_F(FrameReaderTest, SmallFramesSentTogetherArriveInOrderWithTheirPrefixes) {
  FrameReader prefixed{socket, kCheck, "routed stream", sink, scratch, 16};
  std::deque<std::vector<std::byte>> payloads;  // stable: one buffer per frame
  std::vector<std::vector<std::byte>> prefixes;
  sink.on_place = [&](FrameReader& r, const FrameHeader& h) {
    prefixes.emplace_back(r.prefix().begin(), r.prefix().end());
    payloads.emplace_back(h.length);
    return FramePlacement::read(payloads.back());
  };
  const int frames = 100;
  std::vector<std::byte> wire;
  for (int i = 0; i < frames; ++i) {
    const std::vector<std::byte> prefix(16, static_cast<std::byte>(i));
    const std::vector<std::byte> payload = pattern(static_cast<std::size_t>(i) * 7, i);
    const FrameBytes h = encode_frame_header(header(i, 0, payload.size(), payload.size()));
    wire.insert(wire.end(), prefix.begin(), prefix.end());
    wire.insert(wire.end(), h.begin(), h.end());
    wire.insert(wire.end(), payload.begin(), payload.end());
  }
  write(wire);
  prefixed.start();
  EXPECT_TRUE(run_until([&] { return sink.done.size() == static_cast<std::size_t>(frames); }));
  ASSERT_EQ(sink.done.size(), static_cast<std::size_t>(frames));
  for (int i = 0; i < frames; ++i) {
    EXPECT_EQ(sink.done[i].message_id, static_cast<std::uint64_t>(i));
    EXPECT_EQ(prefixes[i], std::vector<std::byte>(16, static_cast<std::byte>(i)));
    EXPECT_EQ(payloads[i], pattern(static_cast<std::size_t>(i) * 7, i)) << "frame " << i;
  }
}

}  // namespace
}  // namespace multilane::runtime
