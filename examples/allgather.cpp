// examples/allgather.cpp — every rank ends up with every rank's block, in rank order.
//   multilane launch -n 4 -- build/examples/allgather [BYTES_PER_RANK] [ALGORITHM]
#include <multilane/communicator.hpp>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t block = example::size_argument(argc, argv, 64 * 1024);

  const auto mine = example::data_of(comm.rank(), block);
  std::vector<std::byte> all(block * comm.size());
  comm.allgather(mine, all, {.algorithm = example::algorithm_argument(argc, argv)});

  bool ok = true;
  for (int r = 0; r < comm.size(); ++r) {
    const auto expected = example::data_of(r, block);
    ok = ok && std::equal(expected.begin(), expected.end(), all.begin() + r * block);
  }
  return example::report("allgather", comm.rank(), ok);
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
