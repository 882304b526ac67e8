// tests/runtime/outcome_text.hpp — an operation's outcome as the text a test compares.
#pragma once

#include <string>

#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime::testing {

// "" on success, else the failure's text (its kind is checked where a test cares).
inline std::string text_of(const Outcome& outcome) {
  return outcome ? outcome->text : std::string();
}

}  // namespace multilane::runtime::testing
