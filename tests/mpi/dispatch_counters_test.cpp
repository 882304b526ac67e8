// The route counters: each thread counts in its own counters, and a read sums every thread's,
// those of threads that ended included, and a count made while a thread exits.
#include <gtest/gtest.h>

#include <thread>

#include "mpi/dispatch_counters.hpp"

namespace multilane::mpi {
namespace {

unsigned long long counted(Counted what) {
  return counted_so_far()[static_cast<std::size_t>(what)];
}

TEST(DispatchCounters, EveryThreadsCountsAreSummedAlsoAfterItEnded) {
  const unsigned long long before = counted(Counted::NonblockingMpi);
  count(Counted::NonblockingMpi);
  std::thread other([] {
    for (int i = 0; i < 3; ++i) count(Counted::NonblockingMpi);
  });
  other.join();
  EXPECT_EQ(counted(Counted::NonblockingMpi), before + 4);
  EXPECT_EQ(counted_so_far().size(), kCounted);
}

// A thread_local made before the thread's first count is destroyed after its counters were
// folded into the sum; what its destructor counts still counts, once.
struct CountsWhenDestroyed {
  ~CountsWhenDestroyed() { count(Counted::BlockingHandedOff); }
};

TEST(DispatchCounters, ACountMadeWhileTheThreadExitsIsKept) {
  const unsigned long long before = counted(Counted::BlockingHandedOff);
  std::thread exiting([] {
    thread_local CountsWhenDestroyed late;
    static_cast<void>(&late);
    count(Counted::BlockingHandedOff);
  });
  exiting.join();
  EXPECT_EQ(counted(Counted::BlockingHandedOff), before + 2);
}

TEST(DispatchCounters, TheCExportFillsAtMostTheValuesAsked) {
  const unsigned long long before = counted(Counted::BlockingMpi);
  count(Counted::BlockingMpi);
  unsigned long long values[2] = {0, 0};
  EXPECT_EQ(multilane_mpi_counters(values, 2), static_cast<int>(kCounted));
  EXPECT_EQ(values[static_cast<std::size_t>(Counted::BlockingMpi)], before + 1);
}

}  // namespace
}  // namespace multilane::mpi
