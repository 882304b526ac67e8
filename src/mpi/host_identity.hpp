// mpi/host_identity.hpp — which ranks share a node: a hash of the host name, the kernel's
// boot id and the network namespace.
//
// The host name alone collides (containers and cloned machines share names; NCCL learned this);
// /proc/sys/kernel/random/boot_id is fresh at every boot of a kernel, so two processes with the
// same hash share a kernel, hence shared memory, and a network namespace, hence loopback (the
// emulated grid's nodes are namespaces of one kernel). Ranks gather these hashes over MPI and
// group equal ones into one node of the platform. MULTILANE_HOST_ID, when set, replaces all
// three (as NCCL_HOSTID does).
#pragma once

#include <cstdint>
#include <string>

namespace multilane::mpi {

struct HostIdentity {
  std::string name;        // gethostname()
  std::uint64_t hash = 0;  // of name, boot id and network namespace
};

HostIdentity this_host();

}  // namespace multilane::mpi
