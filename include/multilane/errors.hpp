// multilane/errors.hpp — the errors multilane reports: one Error with a kind and the text.
//
// Every failure has a kind, so a caller can tell a bad argument from a timeout from a dead
// peer without reading the message:
//
//   kind            meaning                                          CLI exit  C API (ML_ERR_)
//   usage           the caller asked for something that cannot be    2         USAGE (1)
//                   (unknown algorithm, size out of range): the text
//                   names the argument and what is allowed
//   platform        a platform file is malformed (FILE:LINE: key)    2         PLATFORM (3)
//   timeout         no progress for the configured time (a hang)     3         TIMEOUT (4)
//   peer_gone       a peer closed, reset or never accepted its       4         PEER_GONE (5)
//                   connection (end of file, reset, broken pipe)
//   authentication  a peer failed the handshake (wrong job secret,   5         AUTHENTICATION (6)
//                   another protocol version)
//   mismatch        ranks called different collectives or sizes      6         MISMATCH (7)
//   protocol        a peer sent bytes that are not the protocol      7         PROTOCOL (8)
//   resource        the system refused memory, a port, a segment     8         RESOURCE (9)
//   internal        a failure multilane did not expect (a bug)       9         INTERNAL (10)
//
// The C++ API throws: UsageError (kind usage), PlatformError (kind platform) and
// CommunicationError (every other kind) are the Errors a caller may catch one by one, or
// catch Error and switch on kind(). what() is the text alone; describe() puts the kind in front
// ("peer gone: rank 2 closed the connection ..."), as the CLI and the MPI library print it. The C
// API returns the kind's code and keeps the text for ml_last_error().
#pragma once

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace multilane {

enum class ErrorKind : std::uint8_t {
  usage,
  platform,
  timeout,
  peer_gone,
  authentication,
  mismatch,
  protocol,
  resource,
  internal,
};

// "usage", "platform file", "timeout", "peer gone", "authentication", "mismatch",
// "protocol", "resource", "internal".
std::string_view kind_name(ErrorKind kind);
// The command-line tool's exit status for an error of this kind (the table above), and back:
// the kind a process that exited with `status` reported (internal for a status not in the
// table).
int exit_status(ErrorKind kind);
ErrorKind kind_of_exit_status(int status);
// "<kind>: <text>", as the CLI and the MPI library print a failure.
std::string describe(ErrorKind kind, std::string_view text);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& text) : std::runtime_error(text), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }
  // "<kind>: <text>".
  std::string describe() const;

 private:
  ErrorKind kind_;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& text) : Error(ErrorKind::usage, text) {}
};

class PlatformError : public Error {
 public:
  explicit PlatformError(const std::string& text) : Error(ErrorKind::platform, text) {}
};

// A running job could not complete an operation; kind() says why (timeout, peer_gone,
// authentication, mismatch, protocol, resource or internal).
class CommunicationError : public Error {
 public:
  CommunicationError(ErrorKind kind, const std::string& text) : Error(kind, text) {}
};

// Throws the Error class that matches `kind` (UsageError, PlatformError, CommunicationError).
[[noreturn]] void throw_error(ErrorKind kind, const std::string& text);

// The kind of any exception: an Error's own, resource for std::bad_alloc, internal otherwise.
ErrorKind kind_of(const std::exception& e);

}  // namespace multilane
