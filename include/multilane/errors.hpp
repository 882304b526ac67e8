// multilane/errors.hpp — the exceptions multilane throws.
//
// UsageError: the caller asked for something that cannot be (unknown algorithm, a size that
// does not parse, an argument out of range). Its message names the argument and what is
// allowed. The command-line tool exits with status 2 on it.
// PlatformError: a platform file is malformed; the message reads `FILE:LINE: key: reason`.
// CommunicationError: a running job could not complete an operation: a peer died or hung
// (timeout), sent garbage, failed authentication, or ranks called different collectives.
// The message names the peer rank and what was awaited.
#pragma once

#include <stdexcept>
#include <string>

namespace multilane {

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class PlatformError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CommunicationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace multilane
