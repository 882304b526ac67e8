// mpi/progress_wait.cpp — polling wait (progress_wait.hpp).
#include "mpi/progress_wait.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "mpi/caller_cpu.hpp"

namespace multilane::mpi {

void wait_with_progress(Request& request) {
  const CallerCpu keep_core;  // the wait may sleep
  std::chrono::microseconds pause{0};
  for (int round = 0;; ++round) {
    if (request.test()) return;
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (round < 64) {
      std::this_thread::yield();
    } else {
      pause = std::min(std::chrono::microseconds{200}, pause + std::chrono::microseconds{10});
      std::this_thread::sleep_for(pause);
    }
  }
}

}  // namespace multilane::mpi
