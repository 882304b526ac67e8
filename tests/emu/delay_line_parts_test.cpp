// tests/emu/delay_line_parts_test.cpp — the delay line's pieces: shaper arithmetic, the frame
// ring against a reference queue, the frame filter and the shared counters file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <random>

#include "emu/delay_line/counters.hpp"
#include "emu/delay_line/frame_filter.hpp"
#include "emu/delay_line/frame_ring.hpp"
#include "emu/delay_line/wan_shaper.hpp"
#include "frames.hpp"
#include "multilane/emu.hpp"

namespace multilane::emu {
namespace {

using testing::arp_request;
using testing::frame_to;

TEST(WanShaper, SerialisesThenDelaysAndDropsAtTheTail) {
  WanShaper line(1e6, 1'000'000, 3000);       // 1 byte per microsecond, 1 ms, 3000-byte queue
  EXPECT_EQ(line.admit(1000, 0), 2'000'000);  // sent by 1 ms, arrives 1 ms later
  EXPECT_EQ(line.admit(1000, 0), 3'000'000);
  EXPECT_EQ(line.admit(1000, 0), 4'000'000);  // exactly fills the queue
  EXPECT_EQ(line.backlog_bytes(0), 3000u);
  EXPECT_EQ(line.admit(1000, 0), std::nullopt);  // drop-tail
  EXPECT_EQ(line.backlog_bytes(1'500'000), 1500u);
  EXPECT_EQ(line.admit(1000, 1'500'000), 5'000'000);
  EXPECT_EQ(line.backlog_bytes(10'000'000), 0u);
  EXPECT_EQ(line.admit(500, 10'000'000), 11'500'000);  // idle line: no queueing
}

TEST(WanShaper, UnlimitedLineOnlyDelays) {
  WanShaper line(0, 7, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(line.admit(65000, 10), 17);
  EXPECT_EQ(line.backlog_bytes(10), 0u);
}

TEST(FrameRing, BehavesLikeAQueueThroughManyWrapArounds) {
  FrameRing ring(4096);
  std::deque<std::vector<std::uint8_t>> model;
  std::mt19937 random(3);
  std::int64_t due = 0;
  int rejected = 0;
  for (int step = 0; step < 20000; ++step) {
    if (random() % 2 == 0) {
      const std::size_t len = random() % 700;
      std::uint8_t* slot = ring.reserve(700);
      if (!slot) {
        ++rejected;
        ASSERT_FALSE(model.empty()) << "an empty ring must accept a frame";
        continue;
      }
      std::vector<std::uint8_t> frame(len);
      for (auto& b : frame) b = static_cast<std::uint8_t>(random());
      std::copy(frame.begin(), frame.end(), slot);
      if (random() % 5 == 0) continue;  // reserved but not kept (a filtered frame)
      ring.commit(len, ++due);
      model.push_back(frame);
    } else if (!model.empty()) {
      ASSERT_FALSE(ring.empty());
      const auto front = ring.front();
      ASSERT_EQ(std::vector<std::uint8_t>(front.begin(), front.end()), model.front());
      ring.pop();
      model.pop_front();
    }
    ASSERT_EQ(ring.frames(), model.size());
  }
  EXPECT_GT(rejected, 0) << "the test should fill the ring now and then";
}

TEST(FrameRing, DueTimesComeOutInOrder) {
  FrameRing ring(1 << 16);
  for (int i = 0; i < 50; ++i) {
    ring.reserve(100);
    ring.commit(static_cast<std::size_t>(i), 1000 + i);
  }
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(ring.front_due_ns(), 1000 + i);
    EXPECT_EQ(ring.front().size(), static_cast<std::size_t>(i));
    ring.pop();
  }
  EXPECT_TRUE(ring.empty());
}

TEST(FrameFilter, OnlyFramesForTheFarSiteCross) {
  const auto to_site_1 = frame_to(1, 100, 0);
  EXPECT_TRUE(frame_for_site(to_site_1.data(), to_site_1.size(), 1));
  EXPECT_FALSE(frame_for_site(to_site_1.data(), to_site_1.size(), 2));
  const auto arp_for_site_2 = arp_request(lane_ipv4(2, 5, 1));
  EXPECT_TRUE(frame_for_site(arp_for_site_2.data(), arp_for_site_2.size(), 2));
  EXPECT_FALSE(frame_for_site(arp_for_site_2.data(), arp_for_site_2.size(), 1));
  auto outside = arp_request(0xC0A80101);  // 192.168.1.1
  EXPECT_FALSE(frame_for_site(outside.data(), outside.size(), 0));
  auto ipv4_broadcast = frame_to(1, 100, 0);
  std::fill(ipv4_broadcast.begin(), ipv4_broadcast.begin() + 6, 0xff);
  EXPECT_FALSE(frame_for_site(ipv4_broadcast.data(), ipv4_broadcast.size(), 1));
  auto multicast = frame_to(1, 100, 0);
  multicast[0] = 0x33;  // IPv6 multicast
  EXPECT_FALSE(frame_for_site(multicast.data(), multicast.size(), 1));
  auto foreign = frame_to(1, 100, 0);
  foreign[1] = 0x00;  // not our MAC prefix
  EXPECT_FALSE(frame_for_site(foreign.data(), foreign.size(), 1));
  EXPECT_FALSE(frame_for_site(to_site_1.data(), 13, 1));  // runt
  EXPECT_FALSE(frame_for_site(arp_for_site_2.data(), 41, 2));
}

TEST(CounterFile, SharedBetweenMappings) {
  char dir[] = "/tmp/multilane-counters-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/wan0.counters";
  {
    CounterFile writer = CounterFile::create(path);
    writer.block().directions[1].frames_out = 42;
    writer.block().directions[0].bps = 1'000'000;
    writer.block().directions[0].busy_until_ns = 5'000'000;
    const CounterFile reader = CounterFile::open(path);
    EXPECT_EQ(reader.block().directions[1].frames_out.load(), 42u);
    EXPECT_EQ(queue_bytes_at(reader.block().directions[0], 3'000'000), 2000u);
    EXPECT_EQ(queue_bytes_at(reader.block().directions[0], 6'000'000), 0u);
  }
  const std::string bad = std::string(dir) + "/bad";
  FILE* f = fopen(bad.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(std::string(sizeof(CounterBlock), 'x').c_str(), f);
  std::fclose(f);
  try {
    CounterFile::open(bad);
    ADD_FAILURE() << "a file without the magic must be refused";
  } catch (const EmuError& e) {
    EXPECT_EQ(std::string(e.what()), bad + ": not a delay-line counters file (bad magic)");
  }
  EXPECT_THROW(CounterFile::open(std::string(dir) + "/missing"), EmuError);
  unlink(path.c_str());
  unlink(bad.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace multilane::emu
