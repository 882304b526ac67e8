// alltoall.cpp — pairwise exchange (step k: send to r+k, receive from r-k, one step after the
// other, as Open MPI's and MPICH's pairwise algorithm) and linear (every send and receive
// posted at once, Open MPI's basic linear).
#include "builders.hpp"

namespace multilane::algo {

namespace {

Range block(Buffer buffer, int rank, std::uint64_t size) {
  return {buffer, static_cast<std::uint64_t>(rank) * size, size};
}

Schedule alltoall(const Platform& platform, const BuildParams& params, bool stepwise) {
  const int p = platform.num_ranks();
  const std::uint64_t size = params.size;
  ScheduleBuilder b(Collective::Alltoall, stepwise ? "pairwise" : "linear", p, params.root, size,
                    0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    b.copy(block(Buffer::Recv, r, size), block(Buffer::Send, r, size), {});
    OpIndex sent = kNoOp;
    OpIndex received = kNoOp;
    for (int step = 1; step < p; ++step) {
      const int to = (r + step) % p;
      const int from = (r - step + p) % p;
      const OpIndex after_send = stepwise ? sent : kNoOp;
      const OpIndex after_recv = stepwise ? received : kNoOp;
      sent = b.send(to, block(Buffer::Send, to, size), kAnyLane, {after_send, after_recv});
      received = b.recv(from, block(Buffer::Recv, from, size), kAnyLane, {after_send, after_recv});
    }
  }
  return b.finish();
}

}  // namespace

Schedule alltoall_pairwise(const Platform& platform, const BuildParams& params) {
  return alltoall(platform, params, true);
}

Schedule alltoall_linear(const Platform& platform, const BuildParams& params) {
  return alltoall(platform, params, false);
}

}  // namespace multilane::algo
