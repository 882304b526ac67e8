// bcast_vandegeijn.cpp — van de Geijn's broadcast (Barnett et al., SC 1994; MPICH's
// scatter + recursive-doubling allgather): the message is cut into p chunks, scattered down a
// binomial tree (each relative rank v gets the chunks of its subtree, keeps chunk v), then
// allgathered by recursive doubling. Any p: the allgather folds in the extra ranks.
#include <algorithm>
#include <vector>

#include "builders.hpp"
#include "rank_order.hpp"
#include "recursive_doubling.hpp"
#include "support/ceil_div.hpp"

namespace multilane::algo {

Schedule bcast_vandegeijn(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const int root = params.root;
  const std::uint64_t size = params.size;
  const std::uint64_t chunk = ceil_div<std::uint64_t>(size, p);
  ChunkLayout layout;
  layout.positions = p;
  layout.rank_at = [=](int v) { return absolute_rank(v, root, p); };
  layout.chunks = [=](int first, int last) {
    const std::uint64_t begin = std::min<std::uint64_t>(first * chunk, size);
    const std::uint64_t end = std::min<std::uint64_t>(last * chunk, size);
    return Range{Buffer::Recv, begin, end - begin};
  };

  ScheduleBuilder b(Collective::Bcast, "vandegeijn", p, root, size, chunk);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const int v = relative_rank(r, root, p);
    const int span = subtree_span(v, p);
    // Scatter: receive the subtree's chunks, hand each child its subtree's, one at a time.
    std::vector<OpIndex> ready;
    OpIndex previous = kNoOp;
    if (v != 0) {
      previous = b.recv(layout.rank_at(v - (v & -v)), layout.chunks(v, v + span), kAnyLane, {});
      ready.push_back(previous);
    }
    int mask = 1;
    while (mask < span) mask <<= 1;
    for (mask >>= 1; mask > 0; mask >>= 1) {
      const int child = v + mask;
      if (child >= p || mask >= span) continue;
      const OpIndex sent =
          b.send(layout.rank_at(child), layout.chunks(child, child + subtree_span(child, p)),
                 kAnyLane, {previous, ready.empty() ? kNoOp : ready.front()});
      if (sent != kNoOp) previous = sent;
      ready.push_back(sent);
    }
    // Allgather: the recursive doubling overwrites subtree chunks, so it starts after the
    // scatter sends that read them.
    emit_recursive_doubling(b, v, layout, ready);
  }
  return b.finish();
}

}  // namespace multilane::algo
