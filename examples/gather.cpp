// examples/gather.cpp — every rank's block ends up, in rank order, at rank 0.
//   multilane launch -n 4 -- build/examples/gather [BYTES_PER_RANK] [ALGORITHM]
#include <multilane/communicator.hpp>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t block = example::size_argument(argc, argv, 64 * 1024);
  const int root = 0;

  const auto mine = example::data_of(comm.rank(), block);
  std::vector<std::byte> all(comm.rank() == root ? block * comm.size() : 0);
  comm.gather(mine, all, root, {.algorithm = example::algorithm_argument(argc, argv)});

  bool ok = true;
  for (int r = 0; comm.rank() == root && r < comm.size(); ++r) {
    const auto expected = example::data_of(r, block);
    ok = ok && std::equal(expected.begin(), expected.end(), all.begin() + r * block);
  }
  return example::report("gather", comm.rank(), ok);
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
