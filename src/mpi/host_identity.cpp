// mpi/host_identity.cpp — host name, boot id and network namespace, hashed (host_identity.hpp).
#include "mpi/host_identity.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <string>

namespace multilane::mpi {

HostIdentity this_host() {
  HostIdentity host;
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) == 0) host.name = name.data();
  std::string boot_id;
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::getline(file, boot_id);
  // Processes of one kernel in different network namespaces (containers, the emulated grid's
  // nodes) cannot reach each other over loopback: they are different nodes.
  struct stat net {};
  const auto net_namespace = stat("/proc/self/ns/net", &net) == 0 ? net.st_ino : 0;
  std::string key = host.name + '\n' + boot_id + '\n' + std::to_string(net_namespace);
  if (const char* id = std::getenv("MULTILANE_HOST_ID"); id != nullptr && *id != '\0') key = id;
  host.hash = XXH64(key.data(), key.size(), 0x6d6c616e65);
  return host;
}

}  // namespace multilane::mpi
