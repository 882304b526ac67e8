// mpi/reduction_types.cpp — see reduction_types.hpp.
#include "mpi/reduction_types.hpp"

#include <array>
#include <cstdint>
#include <utility>

namespace multilane::mpi {

namespace {

template <typename T>
constexpr ElementType integer_type() {
  if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1) return ElementType::Int8;
    if constexpr (sizeof(T) == 2) return ElementType::Int16;
    if constexpr (sizeof(T) == 4) return ElementType::Int32;
    return ElementType::Int64;
  } else {
    if constexpr (sizeof(T) == 1) return ElementType::Uint8;
    if constexpr (sizeof(T) == 2) return ElementType::Uint16;
    if constexpr (sizeof(T) == 4) return ElementType::Uint32;
    return ElementType::Uint64;
  }
}

std::optional<ElementType> element_of(MPI_Datatype type) {
  // Open MPI's handles are pointers to globals, MPICH's integer constants: neither can sit in a
  // constexpr table, so the table is built at the first call.
  static const std::array<std::pair<MPI_Datatype, ElementType>, 27> table = {{
      {MPI_INT8_T, ElementType::Int8},
      {MPI_INT16_T, ElementType::Int16},
      {MPI_INT32_T, ElementType::Int32},
      {MPI_INT64_T, ElementType::Int64},
      {MPI_UINT8_T, ElementType::Uint8},
      {MPI_UINT16_T, ElementType::Uint16},
      {MPI_UINT32_T, ElementType::Uint32},
      {MPI_UINT64_T, ElementType::Uint64},
      {MPI_SIGNED_CHAR, integer_type<signed char>()},
      {MPI_UNSIGNED_CHAR, integer_type<unsigned char>()},
      {MPI_BYTE, ElementType::Uint8},
      {MPI_SHORT, integer_type<short>()},
      {MPI_UNSIGNED_SHORT, integer_type<unsigned short>()},
      {MPI_INT, integer_type<int>()},
      {MPI_UNSIGNED, integer_type<unsigned>()},
      {MPI_LONG, integer_type<long>()},
      {MPI_UNSIGNED_LONG, integer_type<unsigned long>()},
      {MPI_LONG_LONG, integer_type<long long>()},
      {MPI_UNSIGNED_LONG_LONG, integer_type<unsigned long long>()},
      {MPI_FLOAT, ElementType::Float},
      {MPI_DOUBLE, ElementType::Double},
      {MPI_FLOAT_INT, ElementType::FloatInt},
      {MPI_DOUBLE_INT, ElementType::DoubleInt},
      {MPI_LONG_INT, ElementType::LongInt},
      {MPI_2INT, ElementType::IntInt},
      {MPI_SHORT_INT, ElementType::ShortInt},
      {MPI_WCHAR, integer_type<wchar_t>()},
  }};
  for (const auto& [mpi, ours] : table) {
    if (mpi == type) return ours;
  }
  return std::nullopt;
}

std::optional<ReduceOp> operation_of(MPI_Op op) {
  static const std::array<std::pair<MPI_Op, ReduceOp>, 12> table = {{
      {MPI_SUM, ReduceOp::Sum},
      {MPI_PROD, ReduceOp::Prod},
      {MPI_MIN, ReduceOp::Min},
      {MPI_MAX, ReduceOp::Max},
      {MPI_LAND, ReduceOp::Land},
      {MPI_LOR, ReduceOp::Lor},
      {MPI_LXOR, ReduceOp::Lxor},
      {MPI_BAND, ReduceOp::Band},
      {MPI_BOR, ReduceOp::Bor},
      {MPI_BXOR, ReduceOp::Bxor},
      {MPI_MINLOC, ReduceOp::Minloc},
      {MPI_MAXLOC, ReduceOp::Maxloc},
  }};
  for (const auto& [mpi, ours] : table) {
    if (mpi == op) return ours;
  }
  return std::nullopt;
}

}  // namespace

namespace {

std::optional<Reduction> map_reduction(MPI_Datatype type, MPI_Op op) {
  const auto element = element_of(type);
  const auto operation = operation_of(op);
  if (!element || !operation) return std::nullopt;
  const Reduction r{*element, *operation};
  if (!reduction_mismatch(r).empty()) return std::nullopt;
  // Pairs with a hole (MPI_DOUBLE_INT: 12 data bytes in 16) would reach multilane packed, not
  // in the C struct layout the kernels combine: those stay with the MPI library.
  int bytes = 0;
  if (PMPI_Type_size(type, &bytes) != MPI_SUCCESS ||
      static_cast<std::size_t>(bytes) != element_size(r.type)) {
    return std::nullopt;
  }
  return r;
}

}  // namespace

std::optional<Reduction> reduction_of(MPI_Datatype type, MPI_Op op) {
  // A program's loop repeats one reduction: the last pair asked is answered at once. (Predefined
  // handles never change meaning; a freed derived type's handle reused for another is never
  // mapped, since derived types never map.)
  struct Last {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    std::optional<Reduction> reduction;
  };
  thread_local Last last;
  if (type != last.type || op != last.op) last = {type, op, map_reduction(type, op)};
  return last.reduction;
}

}  // namespace multilane::mpi
