// scatter.cpp — scatter and gather, side by side: linear (Open MPI's basic), binomial
// (MPICH), and MagPIe's single-lane grid scatter (one WAN message per site, to a
// representative that scatters locally). Every gather is its scatter with every arrow
// reversed (reverse_schedule), as in the scatter/gather paper. With per-rank counts
// (BuildParams::counts) the same schedules are scatterv and gatherv (blocks.hpp).
#include <vector>

#include "blocks.hpp"
#include "builders.hpp"
#include "rank_order.hpp"

namespace multilane::algo {

namespace {

std::vector<int> subtree_ranks(int v, int p, int root) {
  std::vector<int> ranks;
  for (int u = v; u < v + subtree_span(v, p); ++u) ranks.push_back(absolute_rank(u, root, p));
  return ranks;
}

}  // namespace

Schedule scatter_linear(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const BlockSizes sizes(params.size, params.counts);
  ScheduleBuilder b(Collective::Scatter, "linear", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    if (r != params.root) {
      receive_carried(b, r, params.root, {r}, sizes);
      continue;
    }
    const HeldBlocks held = hold_at_root(b, r, p, sizes);
    for (int u = 0; u < p; ++u) {  // all at once, like Open MPI's basic linear scatter
      if (u != r) send_blocks(b, u, std::span<const int>(&u, 1), sizes, held.store, {});
    }
  }
  return b.finish();
}

Schedule scatter_binomial(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const int root = params.root;
  const BlockSizes sizes(params.size, params.counts);
  ScheduleBuilder b(Collective::Scatter, "binomial", p, root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const int v = relative_rank(r, root, p);
    const HeldBlocks held = v == 0 ? hold_at_root(b, r, p, sizes)
                                   : receive_carried(b, r, absolute_rank(v - (v & -v), root, p),
                                                     subtree_ranks(v, p, root), sizes);
    int mask = 1;
    while (mask < subtree_span(v, p)) mask <<= 1;
    OpIndex previous = kNoOp;
    for (mask >>= 1; mask > 0; mask >>= 1) {  // largest subtree first
      if (v + mask >= p || mask >= subtree_span(v, p)) continue;
      previous = send_after(b, absolute_rank(v + mask, root, p), subtree_ranks(v + mask, p, root),
                            sizes, held, previous);
    }
  }
  return b.finish();
}

Schedule scatter_single_lane(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const BlockSizes sizes(params.size, params.counts);
  const auto groups = ranks_by_site(platform, params.root);
  std::vector<int> group_of(p);
  for (std::size_t s = 0; s < groups.size(); ++s) {
    for (int u : groups[s]) group_of[u] = static_cast<int>(s);
  }
  ScheduleBuilder b(Collective::Scatter, "single-lane", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const auto& members = groups[group_of[r]];
    const int representative = members.front();
    if (r == params.root) {
      // One WAN message per remote site, then the own site, one block at a time.
      const HeldBlocks held = hold_at_root(b, r, p, sizes);
      OpIndex previous = kNoOp;
      for (std::size_t s = 1; s < groups.size(); ++s) {
        previous = send_after(b, groups[s].front(), groups[s], sizes, held, previous, kWanLane);
      }
      hand_out(b, r, members, sizes, held, previous);
    } else if (r == representative) {
      hand_out(b, r, members, sizes, receive_carried(b, r, params.root, members, sizes, kWanLane));
    } else {
      receive_carried(b, r, representative, {r}, sizes);
    }
  }
  return b.finish();
}

Schedule gather_linear(const Platform& platform, const BuildParams& params) {
  return reverse_schedule(scatter_linear(platform, params), Collective::Gather, "linear");
}

Schedule gather_binomial(const Platform& platform, const BuildParams& params) {
  return reverse_schedule(scatter_binomial(platform, params), Collective::Gather, "binomial");
}

Schedule gather_single_lane(const Platform& platform, const BuildParams& params) {
  return reverse_schedule(scatter_single_lane(platform, params), Collective::Gather, "single-lane");
}

}  // namespace multilane::algo
