// mpi/call_class.cpp — classes of calls (call_class.hpp).
#include "mpi/call_class.hpp"

#include <fmt/format.h>

#include <bit>

#include "multilane/units.hpp"

namespace multilane::mpi {

namespace {

bool keeps_reduction(WrappedCall call) {
  return is_reduction(carrier(call));
}

// "1 KiB" for whole binary units, else bytes.
std::string power_of_two(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

}  // namespace

std::uint64_t CallClass::key() const {
  return (static_cast<std::uint64_t>(call) << 24) | (static_cast<std::uint64_t>(bytes_log2) << 16) |
         (static_cast<std::uint64_t>(type) << 8) | static_cast<std::uint64_t>(op);
}

CallClass CallClass::from_key(std::uint64_t key) {
  return {.call = static_cast<WrappedCall>((key >> 24) & 0xff),
          .bytes_log2 = static_cast<std::uint8_t>((key >> 16) & 0xff),
          .type = static_cast<ElementType>((key >> 8) & 0xff),
          .op = static_cast<ReduceOp>(key & 0xff)};
}

CallClass classify(WrappedCall call, std::uint64_t bytes, const Reduction& reduction) {
  CallClass c{.call = call, .bytes_log2 = static_cast<std::uint8_t>(std::bit_width(bytes))};
  if (call == WrappedCall::Barrier || sizes_per_rank(call)) c.bytes_log2 = 0;
  if (keeps_reduction(call)) {
    c.type = reduction.type;
    c.op = reduction.op;
  }
  return c;
}

std::uint64_t lowest_bytes(const CallClass& c) {
  return c.bytes_log2 == 0 ? 0 : std::uint64_t{1} << (c.bytes_log2 - 1);
}

std::string describe(const CallClass& c) {
  std::string text = call_function(c.call, false);
  if (c.call == WrappedCall::Barrier) return text;
  if (sizes_per_rank(c.call)) return text + " (sizes per rank)";
  if (c.bytes_log2 == 0) return text + " of 0 B";
  const std::uint64_t low = lowest_bytes(c);
  text += c.bytes_log2 >= 64 ? fmt::format(" of {} or more", power_of_two(low))
                             : fmt::format(" of {}-{}", power_of_two(low), power_of_two(low * 2));
  if (keeps_reduction(c.call))
    text += fmt::format(" of {}, {}", to_string(c.type), to_string(c.op));
  return text;
}

}  // namespace multilane::mpi
