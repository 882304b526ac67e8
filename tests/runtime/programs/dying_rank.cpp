// tests/runtime/programs/dying_rank.cpp — a rank of a broadcast loop that kills itself with
// SIGKILL at a named point, so that the fault tests (tests/runtime_cli.cmake) do not depend on
// a timer racing the machine's load.
//
//   dying_rank RANK setup [ALGORITHM]      rank RANK dies before it joins: the others set up
//   dying_rank RANK calls N [ALGORITHM]    rank RANK dies after its N-th completed broadcast
//
// Every rank broadcasts 4 MiB from rank 0 with ALGORITHM (binomial by default; hier-shm for the
// shared-memory tests), up to 100000 times; a rank that finishes prints "rank R ok" (none
// should: the job fails).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "multilane/communicator.hpp"

namespace {

[[noreturn]] void die() {
  std::fflush(nullptr);
  kill(getpid(), SIGKILL);
  std::abort();  // not reached
}

int usage() {
  std::fprintf(stderr, "usage: dying_rank RANK (setup | calls N) [ALGORITHM]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const int victim = std::atoi(argv[1]);
  const std::string phase = argv[2];
  long calls = 0;
  int next = 3;
  if (phase == "calls") {
    if (argc < 4) return usage();
    calls = std::atol(argv[next++]);
  } else if (phase != "setup") {
    return usage();
  }
  if (argc > next + 1) return usage();
  const std::string algorithm = argc > next ? argv[next] : "binomial";
  const char* rank_text = std::getenv("MULTILANE_RANK");
  const int rank = rank_text ? std::atoi(rank_text) : 0;
  if (rank == victim && phase == "setup") die();

  try {
    multilane::Communicator comm = multilane::Communicator::from_environment();
    std::vector<std::byte> buffer(4 << 20);
    for (long i = 0; i < 100000; ++i) {
      comm.bcast(buffer, 0, {.algorithm = algorithm});
      if (comm.rank() == victim && i + 1 == calls) die();
    }
    std::printf("rank %d ok\n", comm.rank());
    return 0;
  } catch (const multilane::Error& e) {
    // The kind in words and as the exit status (multilane/errors.hpp), as a user's program may.
    std::fprintf(stderr, "rank %d: %s\n", rank, e.describe().c_str());
    return multilane::exit_status(e.kind());
  }
}
