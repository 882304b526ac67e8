// sim/reduction_lowering.hpp — a reduction's schedule as the simulator runs it.
//
// The flow model knows transfers and local copies. A RecvReduce becomes a Recv followed by a
// Reduce that depends on it (its dependents wait for the Reduce), and a Reduce is priced as a
// local copy at the node's reduction rate (SharedMemory::reduce_bps) instead of its copy rate.
// The runtime combines each chunk as it lands, so this is pessimistic by at most the time to
// combine the last chunk when the network is the slower of the two, and exact when the
// combining is.
#pragma once

#include "multilane/schedule.hpp"

namespace multilane::sim {

bool has_recv_reduce(const Schedule& schedule);
Schedule lower_recv_reduce(const Schedule& schedule);

}  // namespace multilane::sim
