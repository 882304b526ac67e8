// The names, sizes and rules of reduction.hpp (the kernels are the runtime's:
// src/runtime/exec/reduce_kernels.cpp).
#include "multilane/reduction.hpp"

#include <fmt/format.h>

#include <array>

namespace multilane {

namespace {

struct TypeInfo {
  std::string_view name;
  std::size_t size;
};

// In the order of ElementType. Pairs have the layout (and padding) of MPI's C structs.
constexpr std::array<TypeInfo, kNumElementTypes> kTypes = {{
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"uint8", 1},
    {"uint16", 2},
    {"uint32", 4},
    {"uint64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"float", 4},
    {"double", 8},
    {"float-int", 8},
    {"double-int", 16},
    {"long-int", 16},
    {"int-int", 8},
    {"short-int", 8},
}};

constexpr std::array<std::string_view, kNumReduceOps> kOps = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc"};

template <typename Table>
std::string names(const Table& table, auto name_of) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    out += name_of(entry);
  }
  return out;
}

}  // namespace

std::size_t element_size(ElementType type) {
  return kTypes[static_cast<int>(type)].size;
}

std::string_view to_string(ElementType type) {
  return kTypes[static_cast<int>(type)].name;
}

std::string_view to_string(ReduceOp op) {
  return kOps[static_cast<int>(op)];
}

std::optional<ElementType> parse_element_type(std::string_view name) {
  for (int i = 0; i < kNumElementTypes; ++i) {
    if (kTypes[i].name == name) return static_cast<ElementType>(i);
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (int i = 0; i < kNumReduceOps; ++i) {
    if (kOps[i] == name) return static_cast<ReduceOp>(i);
  }
  return std::nullopt;
}

std::string element_type_names() {
  return names(kTypes, [](const TypeInfo& t) { return std::string(t.name); });
}

std::string reduce_op_names() {
  return names(kOps, [](std::string_view o) { return std::string(o); });
}

bool is_integer(ElementType type) {
  return type <= ElementType::Uint64;
}

bool is_floating(ElementType type) {
  return type >= ElementType::Float16 && type <= ElementType::Double;
}

bool is_pair(ElementType type) {
  return type >= ElementType::FloatInt;
}

std::string reduction_mismatch(const Reduction& r) {
  const auto clause = [&](std::string_view applies_to) {
    return fmt::format("{} applies to {} only, not {}", to_string(r.op), applies_to,
                       to_string(r.type));
  };
  switch (r.op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Min:
    case ReduceOp::Max:
      return is_pair(r.type) ? clause("integer and floating-point types") : "";
    case ReduceOp::Land:
    case ReduceOp::Lor:
    case ReduceOp::Lxor:
    case ReduceOp::Band:
    case ReduceOp::Bor:
    case ReduceOp::Bxor:
      return is_integer(r.type) ? "" : clause("integer types");
    case ReduceOp::Minloc:
    case ReduceOp::Maxloc:
      return is_pair(r.type) ? "" : clause("value-index pair types");
  }
  return "unknown operation";
}

}  // namespace multilane
