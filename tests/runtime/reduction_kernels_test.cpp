// The reduction kernels (reduce_elements) on every type and operation against values worked
// out by hand, 16-bit floats rounded to nearest even, minloc/maxloc ties, the rules of which
// operation takes which type, and a RecvReduce's chunks combined as they land in any order and
// cut anywhere (elements split between chunks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "multilane/reduction.hpp"
#include "runtime/exec/chunk_combiner.hpp"

namespace multilane {
namespace {

template <typename T>
std::vector<T> combined(ElementType type, ReduceOp op, std::vector<T> a, const std::vector<T>& b) {
  reduce_elements({type, op}, reinterpret_cast<std::byte*>(a.data()),
                  reinterpret_cast<const std::byte*>(b.data()), a.size());
  return a;
}

TEST(ReduceElements, IntegersEveryOperation) {
  const std::vector<std::int32_t> a{5, -3, 0, 7, 12};
  const std::vector<std::int32_t> b{2, 4, 9, 0, 10};
  using V = std::vector<std::int32_t>;
  constexpr auto I = ElementType::Int32;
  EXPECT_EQ(combined(I, ReduceOp::Sum, a, b), (V{7, 1, 9, 7, 22}));
  EXPECT_EQ(combined(I, ReduceOp::Prod, a, b), (V{10, -12, 0, 0, 120}));
  EXPECT_EQ(combined(I, ReduceOp::Min, a, b), (V{2, -3, 0, 0, 10}));
  EXPECT_EQ(combined(I, ReduceOp::Max, a, b), (V{5, 4, 9, 7, 12}));
  EXPECT_EQ(combined(I, ReduceOp::Land, a, b), (V{1, 1, 0, 0, 1}));
  EXPECT_EQ(combined(I, ReduceOp::Lor, a, b), (V{1, 1, 1, 1, 1}));
  EXPECT_EQ(combined(I, ReduceOp::Lxor, a, b), (V{0, 0, 1, 1, 0}));
  EXPECT_EQ(combined(I, ReduceOp::Band, a, b), (V{0, 4, 0, 0, 8}));
  EXPECT_EQ(combined(I, ReduceOp::Bor, a, b), (V{7, -3, 9, 7, 14}));
  EXPECT_EQ(combined(I, ReduceOp::Bxor, a, b), (V{7, -7, 9, 7, 6}));
}

TEST(ReduceElements, UnsignedSumsWrapAndSmallSignedOnesToo) {
  EXPECT_EQ(combined(ElementType::Uint8, ReduceOp::Sum, std::vector<std::uint8_t>{250, 1},
                     std::vector<std::uint8_t>{10, 2}),
            (std::vector<std::uint8_t>{4, 3}));
  EXPECT_EQ(combined(ElementType::Int8, ReduceOp::Sum, std::vector<std::int8_t>{120},
                     std::vector<std::int8_t>{10}),
            (std::vector<std::int8_t>{-126}));
  // Products and sums wrap, also of types narrower than int and of signed ones.
  EXPECT_EQ(combined(ElementType::Uint16, ReduceOp::Prod, std::vector<std::uint16_t>{65535},
                     std::vector<std::uint16_t>{65535}),
            (std::vector<std::uint16_t>{1}));
  EXPECT_EQ(combined(ElementType::Int32, ReduceOp::Sum, std::vector<std::int32_t>{2147483647},
                     std::vector<std::int32_t>{1}),
            (std::vector<std::int32_t>{-2147483647 - 1}));
  EXPECT_EQ(combined(ElementType::Uint64, ReduceOp::Max, std::vector<std::uint64_t>{1ull << 63},
                     std::vector<std::uint64_t>{7}),
            (std::vector<std::uint64_t>{1ull << 63}));
}

TEST(ReduceElements, FloatingPointOnManyElements) {
  // Long enough for the vectorised loop and its remainder.
  std::vector<double> a(1003);
  std::vector<double> b(1003);
  std::iota(a.begin(), a.end(), 0.5);
  std::iota(b.begin(), b.end(), -2.0);
  const auto sums = combined(ElementType::Double, ReduceOp::Sum, a, b);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(sums[i], a[i] + b[i]) << i;
  const auto mins = combined(ElementType::Float, ReduceOp::Min, std::vector<float>{1.5f, -2.f},
                             std::vector<float>{0.25f, 3.f});
  EXPECT_EQ(mins, (std::vector<float>{0.25f, -2.f}));
}

std::vector<std::uint16_t> halves(std::initializer_list<std::uint16_t> bits) {
  return bits;
}

TEST(ReduceElements, HalfPrecisionRoundsToNearestEven) {
  // 1.0 + 1.0 = 2.0; 2048 + 1 = 2049 is a tie between 2048 and 2050: even mantissa 2048;
  // 65504 (largest) + 32 overflows to infinity; 2^-24 (smallest subnormal) + 2^-24 = 2^-23.
  EXPECT_EQ(combined(ElementType::Float16, ReduceOp::Sum, halves({0x3c00, 0x6800, 0x7bff, 0x0001}),
                     halves({0x3c00, 0x3c00, 0x5000, 0x0001})),
            halves({0x4000, 0x6800, 0x7c00, 0x0002}));
  // 2049 + 2 = 2051, a tie between 2050 and 2052: 2052 (even).
  EXPECT_EQ(combined(ElementType::Float16, ReduceOp::Sum, halves({0x6801}), halves({0x4000})),
            halves({0x6802}));
}

TEST(ReduceElements, BfloatKeepsEightBitsOfMantissa) {
  // 1.0 + 1.0 = 2.0 (0x4000); 256 + 1 = 257 rounds to 256 (0x4380, even).
  EXPECT_EQ(combined(ElementType::Bfloat16, ReduceOp::Sum, halves({0x3f80, 0x4380}),
                     halves({0x3f80, 0x3f80})),
            halves({0x4000, 0x4380}));
}

struct DoubleInt {
  double value;
  int index;
  bool operator==(const DoubleInt&) const = default;
};

TEST(ReduceElements, MinlocAndMaxlocTakeTheSmallerIndexOnATie) {
  const std::vector<DoubleInt> a{{1.0, 4}, {2.0, 1}, {3.0, 9}};
  const std::vector<DoubleInt> b{{1.0, 2}, {5.0, 7}, {3.0, 12}};
  EXPECT_EQ(combined(ElementType::DoubleInt, ReduceOp::Minloc, a, b),
            (std::vector<DoubleInt>{{1.0, 2}, {2.0, 1}, {3.0, 9}}));
  EXPECT_EQ(combined(ElementType::DoubleInt, ReduceOp::Maxloc, a, b),
            (std::vector<DoubleInt>{{1.0, 2}, {5.0, 7}, {3.0, 9}}));
}

TEST(ReductionRules, EachOperationNamesTheTypesItTakes) {
  EXPECT_EQ(reduction_mismatch({ElementType::Float, ReduceOp::Bxor}),
            "bxor applies to integer types only, not float");
  EXPECT_EQ(reduction_mismatch({ElementType::Int32, ReduceOp::Minloc}),
            "minloc applies to value-index pair types only, not int32");
  EXPECT_EQ(reduction_mismatch({ElementType::FloatInt, ReduceOp::Sum}),
            "sum applies to integer and floating-point types only, not float-int");
  EXPECT_EQ(reduction_mismatch({ElementType::Bfloat16, ReduceOp::Max}), "");
  for (int t = 0; t < kNumElementTypes; ++t) {
    const auto type = static_cast<ElementType>(t);
    EXPECT_EQ(parse_element_type(to_string(type)), type);
  }
  EXPECT_EQ(element_size(ElementType::DoubleInt), 16u);
  EXPECT_EQ(element_size(ElementType::ShortInt), 8u);
}

// Chunks of a 3-byte-aligned cut over 8-byte elements, landing in a shuffled order: every
// element is combined exactly once, split ones when their last byte lands.
TEST(ChunkCombiner, CombinesChunksCutAnywhereInAnyOrder) {
  constexpr std::size_t kCount = 257;
  std::vector<std::int64_t> accumulator(kCount);
  std::vector<std::int64_t> incoming(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    accumulator[i] = static_cast<std::int64_t>(i);
    incoming[i] = 1000 * static_cast<std::int64_t>(i) + 7;
  }
  const std::span<std::byte> destination(reinterpret_cast<std::byte*>(accumulator.data()),
                                         kCount * 8);
  runtime::ChunkCombiner combiner(destination, {ElementType::Int64, ReduceOp::Sum});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks;
  for (std::uint64_t at = 0; at < kCount * 8;) {
    const std::uint64_t length = std::min<std::uint64_t>(kCount * 8 - at, at % 5 == 0 ? 3 : 37);
    chunks.emplace_back(at, length);
    at += length;
  }
  std::shuffle(chunks.begin(), chunks.end(), std::mt19937(11));
  const auto* source = reinterpret_cast<const std::byte*>(incoming.data());
  for (const auto& [offset, length] : chunks) {
    std::memcpy(combiner.staging().data() + offset, source + offset, length);
    combiner.landed(offset, length);
  }
  for (std::size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(accumulator[i],
              static_cast<std::int64_t>(i) + 1000 * static_cast<std::int64_t>(i) + 7)
        << "element " << i;
  }
}

}  // namespace
}  // namespace multilane
