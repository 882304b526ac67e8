// examples/allreduce.cpp — every rank ends up with the element-wise sum of every rank's vector.
//   multilane launch -n 4 -- build/examples/allreduce [BYTES] [ALGORITHM]
#include <multilane/communicator.hpp>

#include <cmath>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t count = example::size_argument(argc, argv, 1 << 20) / sizeof(float);

  // Small integers: float sums of them are exact, whatever the order of the additions.
  std::vector<float> mine(count);
  for (std::size_t i = 0; i < count; ++i) mine[i] = static_cast<float>((i + comm.rank()) % 7);
  std::vector<float> sums(count);
  comm.allreduce<float>(mine, sums, multilane::ReduceOp::Sum,
                        {.algorithm = example::algorithm_argument(argc, argv)});

  bool ok = true;
  for (std::size_t i = 0; i < count && ok; ++i) {
    float expected = 0;
    for (int r = 0; r < comm.size(); ++r) expected += static_cast<float>((i + r) % 7);
    ok = sums[i] == expected;
  }
  return example::report("allreduce", comm.rank(), ok);
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
