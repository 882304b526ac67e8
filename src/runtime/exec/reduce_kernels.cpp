// runtime/exec/reduce_kernels.cpp — reduce_elements() of reduction.hpp: one loop per (type,
// operation), written so that the compiler vectorises it (element-wise, no dependence between
// iterations; this file is built with the dynamic vectoriser cost model, see CMakeLists.txt).
// Elements are copied in and out with memcpy, so unaligned buffers (a chunk at any offset of a
// receive buffer) are fine; the compiler turns those copies into plain loads and stores.
#include <bit>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "multilane/reduction.hpp"

namespace multilane {

namespace {

// ---- 16-bit floating point: combined in float, rounded back to nearest even ----

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan (kept quiet)
    return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity
  if (abs < 0x38800000u) {                        // subnormal or zero in half precision
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24: units of 2^-24
    const auto units = static_cast<std::uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(units);
    std::uint32_t rounded = units;
    if (rest > 0.5f || (rest == 0.5f && (units & 1u))) ++rounded;
    return sign | static_cast<std::uint16_t>(rounded);
  }
  std::uint32_t half = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<std::uint16_t>(half);
}

float bfloat_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

std::uint16_t float_to_bfloat(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

// ---- the operations on one value ----

// Integers add and multiply modulo 2^bits, as two's complement hardware does: in an unsigned
// type at least as wide as int, since a narrower one would be promoted to (signed) int, whose
// overflow C++ leaves undefined (65535 * 65535 in uint16_t).
template <typename T>
using Wrapping = std::make_unsigned_t<std::common_type_t<T, unsigned>>;

template <typename T>
T sum_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<Wrapping<T>>(a) + static_cast<Wrapping<T>>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T product_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<Wrapping<T>>(a) * static_cast<Wrapping<T>>(b));
  } else {
    return a * b;
  }
}

template <typename T>
struct Combine {
  static T apply(ReduceOp op, T a, T b) {
    switch (op) {
      case ReduceOp::Sum:
        return sum_of(a, b);
      case ReduceOp::Prod:
        return product_of(a, b);
      case ReduceOp::Min:
        return b < a ? b : a;
      case ReduceOp::Max:
        return a < b ? b : a;
      case ReduceOp::Land:
        return static_cast<T>((a != 0) && (b != 0));
      case ReduceOp::Lor:
        return static_cast<T>((a != 0) || (b != 0));
      case ReduceOp::Lxor:
        return static_cast<T>((a != 0) != (b != 0));
      default:
        if constexpr (std::is_integral_v<T>) {
          if (op == ReduceOp::Band) return static_cast<T>(a & b);
          if (op == ReduceOp::Bor) return static_cast<T>(a | b);
          if (op == ReduceOp::Bxor) return static_cast<T>(a ^ b);
        }
        return a;
    }
  }
};

// One loop per operation, so each is a simple element-wise loop the compiler vectorises.
template <typename T, ReduceOp Op>
void combine_loop(std::byte* inout, const std::byte* in, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, inout + i * sizeof(T), sizeof(T));
    std::memcpy(&b, in + i * sizeof(T), sizeof(T));
    const T c = Combine<T>::apply(Op, a, b);
    std::memcpy(inout + i * sizeof(T), &c, sizeof(T));
  }
}

template <typename T>
void combine_values(ReduceOp op, std::byte* inout, const std::byte* in, std::size_t count) {
  switch (op) {
    case ReduceOp::Sum:
      return combine_loop<T, ReduceOp::Sum>(inout, in, count);
    case ReduceOp::Prod:
      return combine_loop<T, ReduceOp::Prod>(inout, in, count);
    case ReduceOp::Min:
      return combine_loop<T, ReduceOp::Min>(inout, in, count);
    case ReduceOp::Max:
      return combine_loop<T, ReduceOp::Max>(inout, in, count);
    case ReduceOp::Land:
      return combine_loop<T, ReduceOp::Land>(inout, in, count);
    case ReduceOp::Lor:
      return combine_loop<T, ReduceOp::Lor>(inout, in, count);
    case ReduceOp::Lxor:
      return combine_loop<T, ReduceOp::Lxor>(inout, in, count);
    case ReduceOp::Band:
      return combine_loop<T, ReduceOp::Band>(inout, in, count);
    case ReduceOp::Bor:
      return combine_loop<T, ReduceOp::Bor>(inout, in, count);
    case ReduceOp::Bxor:
      return combine_loop<T, ReduceOp::Bxor>(inout, in, count);
    default:
      throw std::logic_error("reduce_elements: operation does not apply to the type");
  }
}

template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void combine_16bit_floats(ReduceOp op, std::byte* inout, const std::byte* in, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t a;
    std::uint16_t b;
    std::memcpy(&a, inout + 2 * i, 2);
    std::memcpy(&b, in + 2 * i, 2);
    const std::uint16_t c = FromFloat(Combine<float>::apply(op, ToFloat(a), ToFloat(b)));
    std::memcpy(inout + 2 * i, &c, 2);
  }
}

// MPI's value-index pairs: {value; int index} with C struct padding.
template <typename V>
struct Pair {
  V value;
  int index;
};

// Only the value and the index are read and written: the padding between them (MPI_DOUBLE_INT
// has 4 bytes) is nobody's data.
template <typename V>
void combine_pairs(ReduceOp op, std::byte* inout, const std::byte* in, std::size_t count) {
  const bool want_min = op == ReduceOp::Minloc;
  constexpr std::size_t kIndexAt = offsetof(Pair<V>, index);
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* out = inout + i * sizeof(Pair<V>);
    const std::byte* other = in + i * sizeof(Pair<V>);
    V a;
    V b;
    int a_index;
    int b_index;
    std::memcpy(&a, out, sizeof(V));
    std::memcpy(&b, other, sizeof(V));
    std::memcpy(&a_index, out + kIndexAt, sizeof(int));
    std::memcpy(&b_index, other + kIndexAt, sizeof(int));
    const bool b_wins = want_min ? b < a : a < b;
    const bool tie = !(a < b) && !(b < a);
    if (b_wins) std::memcpy(out, &b, sizeof(V));
    if (b_wins || (tie && b_index < a_index)) std::memcpy(out + kIndexAt, &b_index, sizeof(int));
  }
}

static_assert(sizeof(Pair<float>) == 8 && sizeof(Pair<double>) == 16 && sizeof(Pair<long>) == 16 &&
              sizeof(Pair<int>) == 8 && sizeof(Pair<short>) == 8);

}  // namespace

void reduce_elements(const Reduction& r, std::byte* inout, const std::byte* in, std::size_t count) {
  const ReduceOp op = r.op;
  switch (r.type) {
    case ElementType::Int8:
      return combine_values<std::int8_t>(op, inout, in, count);
    case ElementType::Int16:
      return combine_values<std::int16_t>(op, inout, in, count);
    case ElementType::Int32:
      return combine_values<std::int32_t>(op, inout, in, count);
    case ElementType::Int64:
      return combine_values<std::int64_t>(op, inout, in, count);
    case ElementType::Uint8:
      return combine_values<std::uint8_t>(op, inout, in, count);
    case ElementType::Uint16:
      return combine_values<std::uint16_t>(op, inout, in, count);
    case ElementType::Uint32:
      return combine_values<std::uint32_t>(op, inout, in, count);
    case ElementType::Uint64:
      return combine_values<std::uint64_t>(op, inout, in, count);
    case ElementType::Float16:
      return combine_16bit_floats<half_to_float, float_to_half>(op, inout, in, count);
    case ElementType::Bfloat16:
      return combine_16bit_floats<bfloat_to_float, float_to_bfloat>(op, inout, in, count);
    case ElementType::Float:
      return combine_values<float>(op, inout, in, count);
    case ElementType::Double:
      return combine_values<double>(op, inout, in, count);
    case ElementType::FloatInt:
      return combine_pairs<float>(op, inout, in, count);
    case ElementType::DoubleInt:
      return combine_pairs<double>(op, inout, in, count);
    case ElementType::LongInt:
      return combine_pairs<long>(op, inout, in, count);
    case ElementType::IntInt:
      return combine_pairs<int>(op, inout, in, count);
    case ElementType::ShortInt:
      return combine_pairs<short>(op, inout, in, count);
  }
}

}  // namespace multilane
