// support/errors.cpp — kinds, exit statuses and the Error classes (multilane/errors.hpp).
#include "multilane/errors.hpp"

#include <new>

namespace multilane {

std::string_view kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return "usage";
    case ErrorKind::platform:
      return "platform file";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::peer_gone:
      return "peer gone";
    case ErrorKind::authentication:
      return "authentication";
    case ErrorKind::mismatch:
      return "mismatch";
    case ErrorKind::protocol:
      return "protocol";
    case ErrorKind::resource:
      return "resource";
    case ErrorKind::internal:
      return "internal";
  }
  return "internal";
}

int exit_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::platform:
      return 2;
    case ErrorKind::timeout:
      return 3;
    case ErrorKind::peer_gone:
      return 4;
    case ErrorKind::authentication:
      return 5;
    case ErrorKind::mismatch:
      return 6;
    case ErrorKind::protocol:
      return 7;
    case ErrorKind::resource:
      return 8;
    case ErrorKind::internal:
      return 9;
  }
  return 9;
}

ErrorKind kind_of_exit_status(int status) {
  switch (status) {
    case 2:
      return ErrorKind::usage;
    case 3:
      return ErrorKind::timeout;
    case 4:
      return ErrorKind::peer_gone;
    case 5:
      return ErrorKind::authentication;
    case 6:
      return ErrorKind::mismatch;
    case 7:
      return ErrorKind::protocol;
    case 8:
      return ErrorKind::resource;
    default:
      return ErrorKind::internal;
  }
}

std::string Error::describe() const {
  std::string text(kind_name(kind_));
  text += ": ";
  text += what();
  return text;
}

void throw_error(ErrorKind kind, const std::string& text) {
  switch (kind) {
    case ErrorKind::usage:
      throw UsageError(text);
    case ErrorKind::platform:
      throw PlatformError(text);
    default:
      throw CommunicationError(kind, text);
  }
}

ErrorKind kind_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return error->kind();
  if (dynamic_cast<const std::bad_alloc*>(&e)) return ErrorKind::resource;
  return ErrorKind::internal;
}

}  // namespace multilane
