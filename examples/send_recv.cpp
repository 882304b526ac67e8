// examples/send_recv.cpp — a ring: every rank sends to the next and receives from the previous,
// non-blocking so that nobody waits for anybody.
//   multilane launch -n 4 -- build/examples/send_recv [BYTES]
#include <multilane/communicator.hpp>

#include "example_util.hpp"

int run(int argc, char** argv) {
  auto comm = multilane::Communicator::from_environment();
  const std::size_t size = example::size_argument(argc, argv, 1 << 20);
  const int next = (comm.rank() + 1) % comm.size();
  const int previous = (comm.rank() + comm.size() - 1) % comm.size();

  const auto mine = example::data_of(comm.rank(), size);
  std::vector<std::byte> got(size);
  multilane::Request in = comm.irecv(got, previous);
  multilane::Request out = comm.isend(mine, next);
  out.wait();
  in.wait();

  return example::report("send_recv", comm.rank(), got == example::data_of(previous, size));
}

int main(int argc, char** argv) {
  return example::guarded(run, argc, argv);
}
