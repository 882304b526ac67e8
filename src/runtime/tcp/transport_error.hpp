// runtime/tcp/transport_error.hpp — the exception every runtime transport throws, and the
// outcome its asynchronous operations report.
//
// TransportError: a connection could not be made, authenticated or used. Its kind
// (multilane/errors.hpp) says which: timeout, peer_gone, authentication, protocol, resource.
// The text names the peer and what was going on, e.g.
// "timed out after 0.2 s waiting for message 3 from 127.0.0.1:4711: received 100 of 1000 bytes".
// A transport object that threw is broken: later calls on it throw again.
//
// Outcome: what an operation's completion receives, nullopt on success, else the Failure.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <system_error>

#include "multilane/errors.hpp"

namespace multilane::runtime {

class TransportError : public CommunicationError {
 public:
  using CommunicationError::CommunicationError;
};

struct Failure {
  ErrorKind kind = ErrorKind::internal;
  std::string text;

  // "<kind>: <text>".
  std::string describe() const { return multilane::describe(kind, text); }
  // Throws the Error of this kind with this text.
  [[noreturn]] void raise() const { throw_error(kind, text); }
  // The failure an exception stands for (its kind as kind_of() gives it).
  static Failure of(const std::exception& e) { return {kind_of(e), e.what()}; }
};

using Outcome = std::optional<Failure>;

// The kind of a socket error: end of file, reset, broken pipe, refused or unreachable is a peer
// gone; timed out is a timeout; no memory, buffers or descriptors is a resource; anything else
// is protocol.
ErrorKind kind_of(const std::error_code& error);
using multilane::kind_of;

}  // namespace multilane::runtime
