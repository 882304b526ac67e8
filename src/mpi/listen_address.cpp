// mpi/listen_address.cpp — loopback, MULTILANE_HOST or the first IPv4 interface up.
#include "mpi/listen_address.hpp"

#include <cstdlib>

#include "mpi/lane_discovery.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

std::string listen_address(bool spans_hosts) {
  if (const char* host = std::getenv("MULTILANE_HOST"); host != nullptr && *host != '\0') {
    return host;
  }
  if (!spans_hosts) return "127.0.0.1";
  const std::vector<LocalLane> up = interfaces_up();
  if (up.empty()) {
    throw CommunicationError(
        ErrorKind::usage,
        "the communicator spans hosts but this host has no IPv4 interface up: set MULTILANE_HOST");
  }
  return up.front().address;
}

}  // namespace multilane::mpi
