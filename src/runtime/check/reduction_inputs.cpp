// runtime/check/reduction_inputs.cpp — see reduction_inputs.hpp.
#include "runtime/check/reduction_inputs.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace multilane::runtime {

namespace {

std::uint64_t mix(int rank, std::uint64_t index) {
  std::uint64_t x =
      index * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(rank) * 0xbf58476dull;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 32);
}

// A small integer for element `index` of `rank`, chosen so that every result is exact.
std::int64_t small_value(const Reduction& r, int rank, std::uint64_t index) {
  const std::uint64_t h = mix(rank, index);
  switch (r.op) {
    case ReduceOp::Prod:
      return (h & 1) ? -1 : 1;
    case ReduceOp::Land:
    case ReduceOp::Lor:
    case ReduceOp::Lxor:
      return static_cast<std::int64_t>(h % 8 < 3 ? 0 : (h % 8 < 6 ? 1 : 5));
    case ReduceOp::Minloc:
    case ReduceOp::Maxloc:
      return static_cast<std::int64_t>(h % 7);  // ties are frequent
    default:
      if (r.type == ElementType::Bfloat16) return static_cast<std::int64_t>(h % 3) - 1;
      return static_cast<std::int64_t>(h % 17) - 8;
  }
}

template <typename T>
void store(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

// MPI's layout of a value-index pair: the index after the value, at int alignment.
template <typename V>
struct PairLayout {
  V value;
  int index;
};

template <typename V>
void store_pair(std::byte* at, V value, int index) {
  std::memset(at, 0, sizeof(PairLayout<V>));
  std::memcpy(at, &value, sizeof(V));
  std::memcpy(at + offsetof(PairLayout<V>, index), &index, sizeof(int));
}

// The bytes of an element that are data (a pair's padding is not), as (offset, length) runs.
struct DataBytes {
  std::size_t first_length;
  std::size_t second_at;  // 0: one run only
  std::size_t second_length;
};

DataBytes data_bytes(ElementType type) {
  switch (type) {
    case ElementType::FloatInt:
      return {sizeof(float), offsetof(PairLayout<float>, index), sizeof(int)};
    case ElementType::DoubleInt:
      return {sizeof(double), offsetof(PairLayout<double>, index), sizeof(int)};
    case ElementType::LongInt:
      return {sizeof(long), offsetof(PairLayout<long>, index), sizeof(int)};
    case ElementType::IntInt:
      return {sizeof(int), offsetof(PairLayout<int>, index), sizeof(int)};
    case ElementType::ShortInt:
      return {sizeof(short), offsetof(PairLayout<short>, index), sizeof(int)};
    default:
      return {element_size(type), 0, 0};
  }
}

bool same_data(const Reduction& r, const std::byte* a, const std::byte* b) {
  const DataBytes d = data_bytes(r.type);
  return std::memcmp(a, b, d.first_length) == 0 &&
         std::memcmp(a + d.second_at, b + d.second_at, d.second_length) == 0;
}

std::uint16_t half_bits(std::int64_t v) {
  // Integers of at most 11 bits are exact in half precision.
  if (v == 0) return 0;
  const std::uint16_t sign = v < 0 ? 0x8000 : 0;
  std::uint64_t m = static_cast<std::uint64_t>(v < 0 ? -v : v);
  int exponent = 0;
  while (m >= 2048) {
    m >>= 1;
    ++exponent;
  }
  while (m < 1024) {
    m <<= 1;
    --exponent;
  }
  return sign | static_cast<std::uint16_t>((exponent + 25) << 10) |
         static_cast<std::uint16_t>(m & 0x3ff);
}

std::uint16_t bfloat_bits(std::int64_t v) {
  const float f = static_cast<float>(v);
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<std::uint16_t>(bits >> 16);  // small integers are exact
}

void store_value(const Reduction& r, std::byte* at, int rank, std::uint64_t index) {
  const std::int64_t v = small_value(r, rank, index);
  const std::uint64_t wide = mix(rank, index);
  // Unsigned sums and bitwise operations wrap or stay in range whatever the values: full range.
  const bool full_range = r.op != ReduceOp::Prod && r.op != ReduceOp::Land &&
                          r.op != ReduceOp::Lor && r.op != ReduceOp::Lxor;
  switch (r.type) {
    case ElementType::Int8:
      return store<std::int8_t>(at, static_cast<std::int8_t>(v));
    case ElementType::Int16:
      return store<std::int16_t>(at, static_cast<std::int16_t>(v));
    case ElementType::Int32:
      return store<std::int32_t>(at, static_cast<std::int32_t>(v));
    case ElementType::Int64:
      return store<std::int64_t>(at, v);
    case ElementType::Uint8:
      return store<std::uint8_t>(at, static_cast<std::uint8_t>(full_range ? wide : v));
    case ElementType::Uint16:
      return store<std::uint16_t>(at, static_cast<std::uint16_t>(full_range ? wide : v));
    case ElementType::Uint32:
      return store<std::uint32_t>(at, static_cast<std::uint32_t>(full_range ? wide : v));
    case ElementType::Uint64:
      return store<std::uint64_t>(at, full_range ? wide : static_cast<std::uint64_t>(v));
    case ElementType::Float16:
      return store<std::uint16_t>(at, half_bits(v));
    case ElementType::Bfloat16:
      return store<std::uint16_t>(at, bfloat_bits(v));
    case ElementType::Float:
      return store<float>(at, static_cast<float>(v));
    case ElementType::Double:
      return store<double>(at, static_cast<double>(v));
    case ElementType::FloatInt:
      return store_pair<float>(at, static_cast<float>(v), rank);
    case ElementType::DoubleInt:
      return store_pair<double>(at, static_cast<double>(v), rank);
    case ElementType::LongInt:
      return store_pair<long>(at, static_cast<long>(v), rank);
    case ElementType::IntInt:
      return store_pair<int>(at, static_cast<int>(v), rank);
    case ElementType::ShortInt:
      return store_pair<short>(at, static_cast<short>(v), rank);
  }
}

std::string element_text(const Reduction& r, const std::byte* at) {
  const auto load = [at]<typename T>(T) {
    T v;
    std::memcpy(&v, at, sizeof(T));
    return v;
  };
  switch (r.type) {
    case ElementType::Int8:
      return fmt::format("{}", load(std::int8_t{}));
    case ElementType::Int16:
      return fmt::format("{}", load(std::int16_t{}));
    case ElementType::Int32:
      return fmt::format("{}", load(std::int32_t{}));
    case ElementType::Int64:
      return fmt::format("{}", load(std::int64_t{}));
    case ElementType::Uint8:
      return fmt::format("{}", load(std::uint8_t{}));
    case ElementType::Uint16:
      return fmt::format("{}", load(std::uint16_t{}));
    case ElementType::Uint32:
      return fmt::format("{}", load(std::uint32_t{}));
    case ElementType::Uint64:
      return fmt::format("{}", load(std::uint64_t{}));
    case ElementType::Float:
      return fmt::format("{}", load(float{}));
    case ElementType::Double:
      return fmt::format("{}", load(double{}));
    default: {
      std::string hex = "0x";
      for (std::size_t i = element_size(r.type); i-- > 0;) {
        hex += fmt::format("{:02x}", static_cast<unsigned>(at[i]));
      }
      return hex;
    }
  }
}

}  // namespace

void fill_reduction_input(const Reduction& reduction, int rank, std::span<std::byte> input) {
  const std::size_t e = element_size(reduction.type);
  for (std::uint64_t i = 0; i + e <= input.size(); i += e) {
    store_value(reduction, input.data() + i, rank, i / e);
  }
}

std::string check_reduced(const Reduction& reduction, int rank, int ranks,
                          std::uint64_t input_offset, std::span<const std::byte> result) {
  const std::size_t e = element_size(reduction.type);
  const std::uint64_t first = input_offset / e;
  const std::size_t count = result.size() / e;
  std::vector<std::byte> expected(result.size());
  std::vector<std::byte> next(result.size());
  for (int r = 0; r < ranks; ++r) {
    std::byte* into = r == 0 ? expected.data() : next.data();
    for (std::size_t i = 0; i < count; ++i) store_value(reduction, into + i * e, r, first + i);
    if (r > 0) reduce_elements(reduction, expected.data(), next.data(), count);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (same_data(reduction, result.data() + i * e, expected.data() + i * e)) continue;
    return fmt::format(
        "rank {}: element {} (receive bytes {}..{}) is {}, expected {} (the {} of "
        "element {} over {} ranks)",
        rank, i, i * e, i * e + e - 1, element_text(reduction, result.data() + i * e),
        element_text(reduction, expected.data() + i * e), to_string(reduction.op), first + i,
        ranks);
  }
  return {};
}

}  // namespace multilane::runtime
