// examples/bcast.cpp — rank 0 broadcasts a buffer to every rank.
//   multilane launch -n 4 -- build/examples/bcast [BYTES] [ALGORITHM]
#include <multilane/communicator.hpp>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t size = example::size_argument(argc, argv, 1 << 20);
  const int root = 0;

  std::vector<std::byte> buffer(size);
  if (comm.rank() == root) buffer = example::data_of(root, size);
  comm.bcast(buffer, root, {.algorithm = example::algorithm_argument(argc, argv)});

  return example::report("bcast", comm.rank(), buffer == example::data_of(root, size));
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
