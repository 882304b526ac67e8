// examples/scatter.cpp — rank 0 hands block i of its buffer to rank i.
//   multilane launch -n 4 -- build/examples/scatter [BYTES_PER_RANK] [ALGORITHM]
#include <multilane/communicator.hpp>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t block = example::size_argument(argc, argv, 64 * 1024);
  const int root = 0;

  std::vector<std::byte> all;
  if (comm.rank() == root) all = example::data_of(root, block * comm.size());
  std::vector<std::byte> mine(block);
  comm.scatter(all, mine, root, {.algorithm = example::algorithm_argument(argc, argv)});

  const auto expected = example::data_of(root, block * comm.size());
  const bool ok = std::equal(mine.begin(), mine.end(), expected.begin() + comm.rank() * block);
  return example::report("scatter", comm.rank(), ok);
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
