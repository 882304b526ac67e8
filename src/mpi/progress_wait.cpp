// mpi/progress_wait.cpp — polling wait (progress_wait.hpp).
#include "mpi/progress_wait.hpp"

#include <mpi.h>

#include <algorithm>
#include <thread>

namespace multilane::mpi {

void PollPace::pause() {
  if (looks_++ < 64) {
    std::this_thread::yield();
    return;
  }
  sleep_ = std::min(std::chrono::microseconds{200}, sleep_ + std::chrono::microseconds{10});
  std::this_thread::sleep_for(sleep_);
}

void wait_with_progress(Request& request) {
  poll_until([&] {
    if (request.test()) return true;
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return false;
  });
}

}  // namespace multilane::mpi
