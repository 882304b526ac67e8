// support/errors.cpp — kinds, exit statuses and the Error classes (multilane/errors.hpp).
#include "multilane/errors.hpp"

#include <array>
#include <new>

namespace multilane {

namespace {

// Per kind, in ErrorKind's order: its name and the command-line tool's exit status.
struct KindFacts {
  std::string_view name;
  int exit_status;
};
constexpr std::array<KindFacts, 9> kFacts = {{{"usage", 2},
                                              {"platform file", 2},
                                              {"timeout", 3},
                                              {"peer gone", 4},
                                              {"authentication", 5},
                                              {"mismatch", 6},
                                              {"protocol", 7},
                                              {"resource", 8},
                                              {"internal", 9}}};
static_assert(kFacts.size() == static_cast<std::size_t>(ErrorKind::internal) + 1);

const KindFacts& facts(ErrorKind kind) {
  return kFacts[static_cast<std::size_t>(kind)];
}

}  // namespace

std::string_view kind_name(ErrorKind kind) {
  return facts(kind).name;
}

int exit_status(ErrorKind kind) {
  return facts(kind).exit_status;
}

ErrorKind kind_of_exit_status(int status) {
  // The first kind with that status: usage, not platform, for 2.
  for (std::size_t i = 0; i < kFacts.size(); ++i) {
    if (kFacts[i].exit_status == status) return static_cast<ErrorKind>(i);
  }
  return ErrorKind::internal;
}

std::string describe(ErrorKind kind, std::string_view text) {
  std::string described(kind_name(kind));
  described += ": ";
  described += text;
  return described;
}

std::string Error::describe() const {
  return multilane::describe(kind_, what());
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
