// alltoall.cpp — pairwise exchange (step k: send to r+k, receive from r-k, one step after the
// other, as Open MPI's and MPICH's pairwise algorithm) and linear (every send and receive
// posted at once, Open MPI's basic linear). With a count per pair of ranks
// (BuildParams::counts, row = sender) the same schedules are alltoallv.
#include <vector>

#include "alltoall_blocks.hpp"
#include "builders.hpp"

namespace multilane::algo {

namespace {

Schedule alltoall(const Platform& platform, const BuildParams& params, bool stepwise) {
  const int p = platform.num_ranks();
  ScheduleBuilder b(Collective::Alltoall, stepwise ? "pairwise" : "linear", p, params.root,
                    params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const Blocks send = blocks_of(Buffer::Send, r, p, params);
    const Blocks recv = blocks_of(Buffer::Recv, r, p, params);
    b.copy(recv(r), send(r), {});
    OpIndex sent = kNoOp;
    OpIndex received = kNoOp;
    for (int step = 1; step < p; ++step) {
      const int to = (r + step) % p;
      const int from = (r - step + p) % p;
      const OpIndex after_send = stepwise ? sent : kNoOp;
      const OpIndex after_recv = stepwise ? received : kNoOp;
      // Steps whose blocks are empty keep the order of the last real ones.
      const OpIndex s = b.send(to, send(to), kAnyLane, {after_send, after_recv});
      const OpIndex g = b.recv(from, recv(from), kAnyLane, {after_send, after_recv});
      if (s != kNoOp) sent = s;
      if (g != kNoOp) received = g;
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
