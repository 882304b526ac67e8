// mpi/caller_cpu.cpp — moving a served call's caller back to its core (caller_cpu.hpp).
#include "mpi/caller_cpu.hpp"

#include <sched.h>

#include "mpi/dispatch_counters.hpp"

namespace multilane::mpi {

namespace {

// Moves the calling thread to `cpu` and gives it back its CPU mask. Best effort: a core that
// left the thread's cpuset meanwhile is refused, and the thread stays where it is.
void move_back(int cpu) {
  cpu_set_t mask;
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask)) return;
  cpu_set_t only;
  CPU_ZERO(&only);
  CPU_SET(cpu, &only);
  if (::sched_setaffinity(0, sizeof only, &only) != 0) return;  // moves it before returning
  ::sched_setaffinity(0, sizeof mask, &mask);
  count(Counted::CallersMovedBack);
}

}  // namespace

CallerCpu::CallerCpu() : cpu_(::sched_getcpu()) {}

CallerCpu::~CallerCpu() {
  if (cpu_ >= 0 && cpu_ < CPU_SETSIZE && ::sched_getcpu() != cpu_) move_back(cpu_);
}

}  // namespace multilane::mpi
