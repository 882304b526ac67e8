// multilane/reduction.hpp — what a reduction combines: the element type and the operation.
//
// A reduction (reduce, allreduce, reduce-scatter; collective.hpp) combines the same element of
// every rank's input with one operation. The types and operations are MPI's predefined ones:
//
//   types       int8 int16 int32 int64 uint8 uint16 uint32 uint64   (integers)
//               float16 bfloat16 float double                         (floating point)
//               float-int double-int long-int int-int short-int       (value-index pairs, laid
//                     out as MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT)
//   operations  sum prod min max             integers and floating point
//               land lor lxor                integers (true is any non-zero value, result 0/1)
//               band bor bxor                integers
//               minloc maxloc                pairs: the smaller (larger) value, and on a tie the
//                                            smaller index
//
// Every operation here is commutative and associative in MPI's sense (floating-point sums are
// taken as associative, as MPI does); the results are deterministic: a given algorithm on a
// given platform combines in the same order on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace multilane {

enum class ElementType : std::uint8_t {
  Int8,
  Int16,
  Int32,
  Int64,
  Uint8,
  Uint16,
  Uint32,
  Uint64,
  Float16,
  Bfloat16,
  Float,
  Double,
  FloatInt,
  DoubleInt,
  LongInt,
  IntInt,
  ShortInt,
};
inline constexpr int kNumElementTypes = 17;

enum class ReduceOp : std::uint8_t {
  Sum,
  Prod,
  Min,
  Max,
  Land,
  Lor,
  Lxor,
  Band,
  Bor,
  Bxor,
  Minloc,
  Maxloc,
};
inline constexpr int kNumReduceOps = 12;

// The type and operation of one reduction call.
struct Reduction {
  ElementType type = ElementType::Uint8;
  ReduceOp op = ReduceOp::Sum;
  friend bool operator==(const Reduction&, const Reduction&) = default;
};

std::size_t element_size(ElementType type);
std::string_view to_string(ElementType type);
std::string_view to_string(ReduceOp op);
std::optional<ElementType> parse_element_type(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);
// "int8, int16, ..." and "sum, prod, ...", for error messages.
std::string element_type_names();
std::string reduce_op_names();

bool is_integer(ElementType type);
bool is_floating(ElementType type);
bool is_pair(ElementType type);

// "" when `op` applies to `type`; else why not, as a clause ("bxor applies to integer types
// only, not float").
std::string reduction_mismatch(const Reduction& reduction);

// The element type of a C++ type, for the typed reduction calls (communicator.hpp).
template <typename T>
constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, std::int8_t>)
    return ElementType::Int8;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return ElementType::Int16;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return ElementType::Int32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return ElementType::Int64;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return ElementType::Uint8;
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return ElementType::Uint16;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return ElementType::Uint32;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return ElementType::Uint64;
  else if constexpr (std::is_same_v<T, float>)
    return ElementType::Float;
  else if constexpr (std::is_same_v<T, double>)
    return ElementType::Double;
  else
    static_assert(sizeof(T) == 0, "no reduction element type for this C++ type");
}

// inout[i] = inout[i] (+) in[i] for `count` elements. The buffers may be unaligned; they must
// not overlap. `reduction` must be valid (reduction_mismatch() empty).
void reduce_elements(const Reduction& reduction, std::byte* inout, const std::byte* in,
                     std::size_t count);

}  // namespace multilane
