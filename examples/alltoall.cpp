// examples/alltoall.cpp — block j of rank i goes to block i of rank j.
//   multilane launch -n 4 -- build/examples/alltoall [BYTES_PER_BLOCK] [ALGORITHM]
#include <multilane/communicator.hpp>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t block = example::size_argument(argc, argv, 16 * 1024);
  const std::size_t p = comm.size();

  const auto mine = example::data_of(comm.rank(), block * p);
  std::vector<std::byte> got(block * p);
  comm.alltoall(mine, got, {.algorithm = example::algorithm_argument(argc, argv)});

  bool ok = true;
  for (std::size_t from = 0; from < p; ++from) {
    const auto theirs = example::data_of(static_cast<int>(from), block * p);
    ok = ok && std::equal(got.begin() + from * block, got.begin() + (from + 1) * block,
                          theirs.begin() + comm.rank() * block);
  }
  return example::report("alltoall", comm.rank(), ok);
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
