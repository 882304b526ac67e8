// tests/runtime/wire_test.cpp — frame header round trip and every validation error's text.
#include <gtest/gtest.h>

#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {
namespace {

constexpr std::string_view kPeer = "127.0.0.1:4711";

FrameHeader sample() {
  return FrameHeader{kFrameStriped, 42, 7, 3, 900, 100, 1000, 0x5151};
}

std::string error_of(const FrameHeader& h, FrameCheck check = {42, 1u << 20}) {
  const FrameBytes bytes = encode_frame_header(h);
  return decode_frame_header(bytes, check, kPeer).error;
}

TEST(Wire, RoundTripIsExactAndLittleEndian) {
  const FrameBytes bytes = encode_frame_header(sample());
  EXPECT_EQ(bytes.size(), 64u);
  EXPECT_EQ(bytes[0], std::byte{0x31});  // magic, least significant byte first
  EXPECT_EQ(bytes[4], std::byte{kProtocolVersion});
  EXPECT_EQ(bytes[8], std::byte{42});     // job id
  EXPECT_EQ(bytes[56], std::byte{0x51});  // signature, the last field
  const FrameDecode decoded = decode_frame_header(bytes, FrameCheck{42, 1u << 20}, kPeer);
  ASSERT_TRUE(decoded.header) << decoded.error;
  EXPECT_EQ(*decoded.header, sample());
  EXPECT_TRUE(decoded.error.empty());
}

TEST(Wire, LargeFieldsSurvive) {
  FrameHeader h{0, ~0ull, ~0ull - 1, 1ull << 40, 0, 0, 0};
  const FrameBytes bytes = encode_frame_header(h);
  const FrameDecode decoded = decode_frame_header(bytes, FrameCheck{~0ull, 0}, kPeer);
  ASSERT_TRUE(decoded.header) << decoded.error;
  EXPECT_EQ(*decoded.header, h);
}

TEST(Wire, BadMagic) {
  FrameBytes bytes = encode_frame_header(sample());
  bytes[0] = std::byte{0x78};
  bytes[1] = std::byte{0x56};
  bytes[2] = std::byte{0x34};
  bytes[3] = std::byte{0x12};
  EXPECT_EQ(decode_frame_header(bytes, FrameCheck{42, 1u << 20}, kPeer).error,
            "frame from 127.0.0.1:4711: bad magic 0x12345678 (expected 0x464c4d31)");
}

TEST(Wire, WrongVersion) {
  FrameBytes bytes = encode_frame_header(sample());
  bytes[4] = std::byte{9};
  const FrameDecode decoded = decode_frame_header(bytes, FrameCheck{42, 1u << 20}, kPeer);
  EXPECT_FALSE(decoded.header);
  EXPECT_EQ(decoded.error, "frame from 127.0.0.1:4711: protocol version 9, expected 1");
}

TEST(Wire, WrongJob) {
  FrameHeader h = sample();
  h.job_id = 5;
  EXPECT_EQ(error_of(h), "frame from 127.0.0.1:4711: job id 5, expected 42");
}

TEST(Wire, UnknownFlags) {
  FrameHeader h = sample();
  h.flags = 0x8001;
  EXPECT_EQ(error_of(h), "frame from 127.0.0.1:4711: unknown flags 0x8000");
}

TEST(Wire, LengthAboveTotal) {
  FrameHeader h = sample();
  h.offset = 0;
  h.length = 2000;
  EXPECT_EQ(error_of(h), "frame from 127.0.0.1:4711: length 2000 exceeds message length 1000");
}

TEST(Wire, OffsetPlusLengthAboveTotal) {
  FrameHeader h = sample();
  h.length = 200;
  EXPECT_EQ(error_of(h),
            "frame from 127.0.0.1:4711: offset 900 + length 200 exceeds message length 1000");
}

TEST(Wire, OffsetThatWouldWrapAround) {
  FrameHeader h = sample();
  h.offset = ~0ull - 50;
  EXPECT_EQ(error_of(h),
            "frame from 127.0.0.1:4711: offset 18446744073709551565 + length 100 "
            "exceeds message length 1000");
}

TEST(Wire, TotalAboveLimit) {
  EXPECT_EQ(error_of(sample(), FrameCheck{42, 999}),
            "frame from 127.0.0.1:4711: message length 1000 exceeds the limit of 999 bytes");
}

TEST(Wire, ChunkEndingExactlyAtTotalIsFine) {
  EXPECT_EQ(error_of(sample()), "");
  EXPECT_EQ(error_of(FrameHeader{0, 42, 0, 0, 0, 0, 0}), "");
}

}  // namespace
}  // namespace multilane::runtime
