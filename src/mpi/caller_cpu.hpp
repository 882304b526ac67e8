// mpi/caller_cpu.hpp — a call multilane serves leaves its caller on the core it found it on.
//
// With more ranks than cores and no binding (Open MPI's default then, `--bind-to none`), where
// each rank runs is the scheduler's choice, and the MPI library never disturbs it: its ranks
// poll without sleeping, so none is ever woken and placed anew. A call multilane serves may
// sleep (a shared-memory wait past its polling, finding a communicator's layout, the job's
// set-up, a nonblocking call's wait), and the kernel places a woken thread next to the thread
// that woke it: measured on 4 ranks of a 2-core node, after one served MPI_Allreduce three
// ranks shared one core in 9 runs of 10 (against 1 of 10 without it), and the MPI library's 2 B
// MPI_Alltoall that followed took 3.9-4.7 us instead of 2.6-2.7 us. Busy cores are balanced
// only every few tens of milliseconds, longer than a benchmark spends at one size, and OSU's
// validation calls one served MPI_Allreduce per size.
//
// So each of those remembers its thread's core and, if the thread ends elsewhere, moves it back
// (pins it to that core, then gives it its own CPU mask again: the scheduler stays free to move
// it later). Nothing is done for a thread that did not move, which costs two reads of the
// current core (sched_getcpu, no system call on x86-64). A thread bound to one core never moves.
#pragma once

namespace multilane::mpi {

class CallerCpu {
 public:
  CallerCpu();
  ~CallerCpu();
  CallerCpu(const CallerCpu&) = delete;
  CallerCpu& operator=(const CallerCpu&) = delete;

 private:
  int cpu_;  // -1: unknown, nothing to restore
};

}  // namespace multilane::mpi
