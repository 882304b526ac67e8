// mpi/host_identity.hpp — which ranks share a node: a hash of the host name and the kernel's
// boot id.
//
// The host name alone collides (containers and cloned machines share names; NCCL learned this);
// /proc/sys/kernel/random/boot_id is fresh at every boot of a kernel, so two processes with the
// same hash share a kernel, hence shared memory. Ranks gather these hashes over MPI and group
// equal ones into one node of the platform. MULTILANE_HOST_ID, when set, replaces both (as
// NCCL_HOSTID does): ranks in different network namespaces of one kernel (the emulated grid)
// are different nodes.
#pragma once

#include <cstdint>
#include <string>

namespace multilane::mpi {

struct HostIdentity {
  std::string name;        // gethostname()
  std::uint64_t hash = 0;  // of name and boot id
};

HostIdentity this_host();

}  // namespace multilane::mpi
