// runtime/transport/call_space.cpp — see call_space.hpp.
#include "runtime/transport/call_space.hpp"

#include <fmt/format.h>

namespace multilane::runtime {

std::string call_label(std::uint64_t sequence) {
  const std::uint32_t space = space_of(sequence);
  if (space == 0) return fmt::format("#{}", sequence);
  return fmt::format("#{} of call space {}", call_number(sequence), space);
}

}  // namespace multilane::runtime
