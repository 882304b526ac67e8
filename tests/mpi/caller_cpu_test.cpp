// A served call's caller ends on the core it started on: moved meanwhile (here by the test, in
// a program by the kernel's wake-up placement), it is moved back and keeps its own CPU mask.
#include <gtest/gtest.h>
#include <sched.h>

#include <optional>
#include <thread>
#include <utility>

#include "mpi/caller_cpu.hpp"
#include "mpi/dispatch_counters.hpp"

namespace multilane::mpi {
namespace {

unsigned long long moved_back() {
  return counted_so_far()[static_cast<std::size_t>(Counted::CallersMovedBack)];
}

cpu_set_t only(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return set;
}

// Two cores this thread may run on, or none.
std::optional<std::pair<int, int>> two_allowed_cores() {
  cpu_set_t mask;
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return std::nullopt;
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &mask)) continue;
    if (first < 0) {
      first = cpu;
    } else {
      return std::pair{first, cpu};
    }
  }
  return std::nullopt;
}

TEST(CallerCpu, ACallerMovedToAnotherCoreIsMovedBackWithItsMaskKept) {
  const auto cores = two_allowed_cores();
  if (!cores) GTEST_SKIP() << "this process may run on one core only";
  std::thread caller([&] {
    const auto [start, other] = *cores;
    cpu_set_t pair = only(start);
    CPU_SET(other, &pair);
    cpu_set_t pinned = only(start);
    ASSERT_EQ(::sched_setaffinity(0, sizeof pinned, &pinned), 0);  // on `start` now
    ASSERT_EQ(::sched_setaffinity(0, sizeof pair, &pair), 0);      // free to move again
    const unsigned long long before = moved_back();
    {
      const CallerCpu keep_core;
      cpu_set_t away = only(other);
      ASSERT_EQ(::sched_setaffinity(0, sizeof away, &away), 0);  // the "scheduler" moves it
      ASSERT_EQ(::sched_getcpu(), other);
      ASSERT_EQ(::sched_setaffinity(0, sizeof pair, &pair), 0);
    }
    EXPECT_EQ(::sched_getcpu(), start);
    cpu_set_t after;
    ASSERT_EQ(::sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &pair));  // not left pinned
    EXPECT_EQ(moved_back(), before + 1);
  });
  caller.join();
}

TEST(CallerCpu, ACallerThatStayedIsLeftAlone) {
  std::thread caller([] {
    const unsigned long long before = moved_back();
    const int cpu = ::sched_getcpu();
    cpu_set_t pinned = only(cpu);
    ASSERT_EQ(::sched_setaffinity(0, sizeof pinned, &pinned), 0);  // cannot move
    { const CallerCpu keep_core; }
    cpu_set_t after;
    ASSERT_EQ(::sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &pinned));
    EXPECT_EQ(moved_back(), before);
  });
  caller.join();
}

// A core the thread may no longer run on is not forced on it.
TEST(CallerCpu, ACoreOutsideTheCallersMaskIsNotForced) {
  const auto cores = two_allowed_cores();
  if (!cores) GTEST_SKIP() << "this process may run on one core only";
  std::thread caller([&] {
    const auto [start, other] = *cores;
    cpu_set_t pinned = only(start);
    ASSERT_EQ(::sched_setaffinity(0, sizeof pinned, &pinned), 0);
    const unsigned long long before = moved_back();
    {
      const CallerCpu keep_core;
      cpu_set_t away = only(other);
      ASSERT_EQ(::sched_setaffinity(0, sizeof away, &away), 0);  // the program binds it elsewhere
    }
    EXPECT_EQ(::sched_getcpu(), other);
    EXPECT_EQ(moved_back(), before);
  });
  caller.join();
}

}  // namespace
}  // namespace multilane::mpi
