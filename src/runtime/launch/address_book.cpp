// runtime/launch/address_book.cpp — see address_book.hpp.
#include "runtime/launch/address_book.hpp"

#include <fmt/format.h>

#include "multilane/errors.hpp"

namespace multilane::runtime {

std::string failure_value(const Failure& why) {
  return fmt::format("!{}:{}", static_cast<int>(why.kind), why.text);
}

void check_not_failure(int rank, const std::string& value) {
  if (value.empty() || value.front() != '!') return;
  // "!<kind>:<why>"; a value that does not parse is still this rank's failure, of unknown kind.
  ErrorKind kind = ErrorKind::internal;
  std::string why = value.substr(1);
  if (const auto colon = why.find(':');
      colon == 1 && why[0] >= '0' && why[0] <= '0' + static_cast<int>(ErrorKind::internal)) {
    kind = static_cast<ErrorKind>(why[0] - '0');
    why = why.substr(2);
  }
  throw_error(kind, fmt::format("rank {} could not set up: {}", rank, why));
}

std::string join_addresses(const std::vector<std::string>& addresses) {
  std::string text;
  for (const auto& address : addresses) {
    if (!text.empty()) text += ',';
    text += address;
  }
  return text;
}

std::vector<std::string> split_addresses(const std::string& text) {
  std::vector<std::string> addresses;
  std::size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const auto comma = text.find(',', begin);
    addresses.push_back(text.substr(begin, comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return addresses;
}

}  // namespace multilane::runtime
