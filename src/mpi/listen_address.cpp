// mpi/listen_address.cpp — loopback, MULTILANE_HOST or the first IPv4 interface up.
#include "mpi/listen_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <array>
#include <cstdlib>

#include "multilane/errors.hpp"

namespace multilane::mpi {

std::string listen_address(bool spans_hosts) {
  if (const char* host = std::getenv("MULTILANE_HOST"); host != nullptr && *host != '\0') {
    return host;
  }
  if (!spans_hosts) return "127.0.0.1";
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw CommunicationError("getifaddrs failed: set MULTILANE_HOST");
  std::string found;
  for (const ifaddrs* entry = list; entry != nullptr && found.empty(); entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    if ((entry->ifa_flags & IFF_UP) == 0 || (entry->ifa_flags & IFF_LOOPBACK) != 0) continue;
    std::array<char, INET_ADDRSTRLEN> text{};
    const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (inet_ntop(AF_INET, &address->sin_addr, text.data(), text.size()) != nullptr) {
      found = text.data();
    }
  }
  freeifaddrs(list);
  if (found.empty()) {
    throw CommunicationError(
        "the communicator spans hosts but this host has no IPv4 interface up: set MULTILANE_HOST");
  }
  return found;
}

}  // namespace multilane::mpi
