// A lone rank (no launcher variables) broadcasts to itself and reports: proof that the
// installed headers and library work from outside the source tree.
#include <multilane/communicator.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto comm = multilane::Communicator::from_environment();
  std::vector<std::byte> data(64, std::byte{7});
  comm.bcast(data, 0);
  std::printf("installed multilane: rank %d of %d, %zu bytes\n", comm.rank(), comm.size(),
              data.size());
  return data[63] == std::byte{7} ? 0 : 1;
}
