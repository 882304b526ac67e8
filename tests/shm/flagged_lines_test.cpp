#include "runtime/shm/flagged_lines.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace multilane::runtime::shm {
namespace {

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>(i * 7 + seed);
  return bytes;
}

TEST(FlaggedLines, BytesGoAroundTheFlagsAndComeBackExactly) {
  // Every offset and length within a slot's lines, including pieces that straddle a line.
  for (std::uint64_t offset = 0; offset < kFlaggedBytes; offset += 5) {
    for (std::uint64_t length = 0; offset + length <= kFlaggedBytes; length += 9) {
      std::array<FlaggedLine, kFlaggedLinesPerSlot> lines{};
      const auto in = pattern(length, static_cast<int>(offset));
      copy_into_lines(lines.data(), offset, in.data(), length);
      for (const FlaggedLine& line : lines) EXPECT_EQ(line.flag, 0u);  // no byte on a flag
      std::vector<std::byte> out(length);
      copy_out_of_lines(out.data(), lines.data(), offset, length);
      ASSERT_EQ(out, in) << offset << " + " << length;
    }
  }
}

TEST(FlaggedLines, TheLinesOfARange) {
  EXPECT_EQ(lines_holding(0, 0).end, 0u);
  EXPECT_EQ(lines_holding(0, 56).first, 0u);
  EXPECT_EQ(lines_holding(0, 56).end, 1u);
  EXPECT_EQ(lines_holding(0, 57).end, 2u);
  EXPECT_EQ(lines_holding(55, 2).first, 0u);
  EXPECT_EQ(lines_holding(55, 2).end, 2u);
  EXPECT_EQ(lines_holding(100, 50).first, 1u);
  EXPECT_EQ(lines_holding(100, 50).end, 3u);
  EXPECT_EQ(lines_holding(0, kFlaggedBytes).end, kFlaggedLinesPerSlot);
}

// The writer stamps only the lines it wrote; a reader looks at the last line of its range, and
// checks every line's fingerprint bits.
TEST(FlaggedLines, StampsSayWhichStageAndWhichCall) {
  std::array<FlaggedLine, kFlaggedLinesPerSlot> lines{};
  const std::uint64_t flag = line_flag(7, 0xabcdef0123456789ULL);
  EXPECT_EQ(flag, 0x2345678900000007ULL);   // the fingerprint's low 32 bits above
  stamp_lines(lines.data(), 60, 60, flag);  // lines 1 and 2
  EXPECT_EQ(lines[0].flag, 0u);
  EXPECT_EQ(lines[1].flag, flag);
  EXPECT_EQ(lines[2].flag, flag);
  EXPECT_EQ(lines[3].flag, 0u);
  EXPECT_TRUE(lines_stamped(lines.data(), 60, 60, 7));
  EXPECT_FALSE(lines_stamped(lines.data(), 60, 60, 8));
  EXPECT_FALSE(lines_stamped(lines.data(), 60, 120, 7));  // its last line is not stamped
  EXPECT_TRUE(lines_carry(lines.data(), 60, 60, flag));
  EXPECT_FALSE(lines_carry(lines.data(), 60, 60, line_flag(7, 0x1)));  // another call
  EXPECT_FALSE(lines_carry(lines.data(), 0, 120, flag));               // line 0 is not stamped
}

}  // namespace
}  // namespace multilane::runtime::shm
