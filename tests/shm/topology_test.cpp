// This machine's topology from hwloc (runtime/shm/topology.hpp), and the spin decision it
// feeds: ranks beyond the hardware threads sleep at once.
#include <gtest/gtest.h>
#include <unistd.h>

#include "runtime/shm/shm_group.hpp"
#include "runtime/shm/topology.hpp"

namespace multilane::runtime::shm {
namespace {

TEST(Topology, HwlocFindsCoresThreadsAndNumaNodes) {
  const Topology& t = machine_topology();
  EXPECT_TRUE(t.from_hwloc);
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.hardware_threads, t.cores);
  EXPECT_GE(t.numa_nodes, 1);
  // hwloc sees what the kernel has online (containers may show fewer than installed).
  EXPECT_LE(t.hardware_threads, sysconf(_SC_NPROCESSORS_CONF));
}

TEST(Topology, RanksBeyondTheHardwareThreadsYieldWhilePolling) {
  const int threads = machine_topology().hardware_threads;
  EXPECT_GT(default_polling(threads).spin.count(), 0);
  EXPECT_FALSE(default_polling(threads).yield);
  EXPECT_GT(default_polling(threads + 1).spin.count(), 0);
  EXPECT_TRUE(default_polling(threads + 1).yield);
}

}  // namespace
}  // namespace multilane::runtime::shm
