// site_lanes.cpp — the site-aware reductions (`multilane-sites`): k lanes cross the WAN at once.
//
// The lane (split-rail) shape of Träff and Hunold's lane collectives, UCC's split_rail and
// NCCL's cross-data-center rings, with the scatter/gather paper's P node pairs as the lanes:
//
//   step 1  inside every site, a ring reduce-scatter leaves chunk i of the vector, reduced over
//           the site, at the site's i-th rank (its "lane leader" i), for i < k;
//   step 2  lane i: the k lane leaders i of all sites combine chunk i across the WAN, k pairs
//           at once, each on 1/k of the vector (allreduce: recursive doubling among the sites;
//           reduce: into the root's site; reduce-scatter: each site gets its ranks' blocks);
//   step 3  inside every site, the chunks go where the collective wants them (allreduce: a ring
//           allgather; reduce: to the root; reduce-scatter: each block to its owner).
//
//      site 0               site 1             k = 2 lanes: each WAN pair carries half the
//    a0  a1  a2           b0  b1  b2          vector once in each direction, instead of one
//    [c0][c1]  --ring--   [c0][c1]            pair carrying all of it.
//     |    \______________/   |
//     \_______ lane 0 _______/
//
// k is BuildParams::wan_pairs when given, else the smallest site's rank count (every rank of
// the smallest site leads a lane), at most the smallest site's rank count.
#include <algorithm>
#include <vector>

#include "builders.hpp"
#include "rank_order.hpp"
#include "reduce_steps.hpp"
#include "support/ceil_div.hpp"
#include "tree_broadcast.hpp"
#include "tree_reduce.hpp"

namespace multilane::algo {

namespace {

struct Lanes {
  std::vector<std::vector<int>> sites;  // ranks by site, the root's site and the root first
  int k = 1;
  int site_of_rank(int rank) const {
    for (std::size_t s = 0; s < sites.size(); ++s) {
      if (std::find(sites[s].begin(), sites[s].end(), rank) != sites[s].end()) {
        return static_cast<int>(s);
      }
    }
    return -1;
  }
};

Lanes plan_lanes(const Platform& platform, const BuildParams& params) {
  Lanes lanes;
  lanes.sites = ranks_by_site(platform, params.root);
  std::size_t smallest = lanes.sites.front().size();
  for (const auto& site : lanes.sites) smallest = std::min(smallest, site.size());
  lanes.k = static_cast<int>(smallest);
  if (params.wan_pairs > 0) lanes.k = std::min(lanes.k, params.wan_pairs);
  return lanes;
}

// The site's pieces for steps 1 and 3: chunk i for the first k ranks, nothing for the others.
Pieces site_pieces(const Pieces& chunks, int members) {
  Pieces p = chunks;
  while (p.count() < members) p.bounds.push_back(p.bounds.back());
  return p;
}

struct Position {
  int site = 0;
  int index = 0;  // within the site
};

Position position_of(const Lanes& lanes, int rank) {
  const int s = lanes.site_of_rank(rank);
  const auto& members = lanes.sites[s];
  return {s, static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin())};
}

ScheduleBuilder lanes_builder(Collective collective, const Platform& platform,
                              const BuildParams& params) {
  return reduction_builder(collective, "multilane-sites", platform.num_ranks(), params);
}

// Step 1 at one rank: the ring reduce-scatter of its site, combining in `accumulator` (the
// vector's offsets); lane leader i ends with chunk i.
struct SiteStep {
  Position at;
  const std::vector<int>* ring;
  Pieces pieces;  // chunk i for the first k ranks of the site, nothing for the others
  Buffer accumulator;
  std::vector<OpIndex> ready;  // every operation of the step
  Range place(int j) const { return pieces.range(accumulator, j, j + 1); }
};

SiteStep reduce_in_site(ScheduleBuilder& b, const Lanes& lanes, const Pieces& chunks, int rank,
                        Buffer accumulator) {
  SiteStep step{.at = position_of(lanes, rank),
                .ring = nullptr,
                .pieces = {},
                .accumulator = accumulator,
                .ready = {}};
  step.ring = &lanes.sites[step.at.site];
  step.pieces = site_pieces(chunks, static_cast<int>(step.ring->size()));
  const auto input = [&](int j) { return step.pieces.range(Buffer::Send, j, j + 1); };
  const auto place = [&](int j) { return step.place(j); };
  step.ready = ring_reduce_scatter(b, *step.ring, step.at.index, input, place, {});
  return step;
}

}  // namespace

constexpr std::uint64_t kMaxRounds = 8;

// Pipelined: the vector is cut into rounds of BuildParams::segment bytes (at least 1/8 of the
// vector), each run through the
// three steps; at tick t a rank emits step 1 of round t, step 2 of round t-1 and step 3 of
// round t-2, so the site's links reduce one round while the WAN carries the previous one and
// the site gathers the one before (every rank ticks alike, so the messages of a channel match
// in order). The WAN connections then carry a steady stream instead of one burst after a
// silence (after which TCP would start slow again).
int multilane_sites_wan_pairs(const Platform& platform, const BuildParams& params) {
  return plan_lanes(platform, params).k;
}

Schedule allreduce_multilane_sites(const Platform& platform, const BuildParams& params) {
  const Lanes lanes = plan_lanes(platform, params);
  ScheduleBuilder b = lanes_builder(Collective::Allreduce, platform, params);
  const int m = static_cast<int>(lanes.sites.size());
  // At most kMaxRounds rounds: each costs every rank 2(n-1) messages in its site of n ranks.
  const std::uint64_t round =
      element_segment(std::max(params.segment, ceil_div<std::uint64_t>(params.size, kMaxRounds)),
                      params.element_size);
  const std::uint64_t rounds = segment_count(params.size, round);
  // Round j's chunks: the j-th `round` bytes of the vector cut in k.
  std::vector<Pieces> chunks(rounds);
  for (std::uint64_t j = 0; j < rounds; ++j) {
    const Range part = segment_of({Buffer::Recv, 0, params.size}, round, j);
    chunks[j] = even_pieces(part.length, lanes.k, params.element_size);
    for (auto& bound : chunks[j].bounds) bound += part.offset;
  }
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    if (m > 1) b.need_scratch(params.size);  // a partner's chunk, at the chunk's own offsets
    std::vector<SiteStep> steps;
    for (std::uint64_t t = 0; t < rounds + 2; ++t) {
      if (t < rounds) steps.push_back(reduce_in_site(b, lanes, chunks[t], r, Buffer::Recv));
      if (t >= 1 && t - 1 < rounds) {
        SiteStep& step = steps[t - 1];
        const int lane = step.at.index;
        if (lane < lanes.k && m > 1) {
          Range incoming = step.place(lane);
          incoming.buffer = Buffer::Scratch;
          const auto done = recursive_doubling_allreduce(
              b, m, step.at.site, [&](int s) { return lanes.sites[s][lane]; }, step.place(lane),
              incoming, step.ready);
          step.ready.insert(step.ready.end(), done.begin(), done.end());
        }
      }
      if (t >= 2) {
        const SiteStep& step = steps[t - 2];
        ring_allgather(
            b, *step.ring, step.at.index, [&](int j) { return step.place(j); }, step.ready);
      }
    }
  }
  return b.finish();
}

Schedule reduce_multilane_sites(const Platform& platform, const BuildParams& params) {
  const Lanes lanes = plan_lanes(platform, params);
  const Pieces chunks = even_pieces(params.size, lanes.k, params.element_size);
  ScheduleBuilder b = lanes_builder(Collective::Reduce, platform, params);
  const int root = params.root;
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    const Buffer acc = r == root ? Buffer::Recv : Buffer::Scratch;
    if (acc == Buffer::Scratch) b.need_scratch(params.size);
    const SiteStep step = reduce_in_site(b, lanes, chunks, r, acc);
    const Position at = step.at;
    const auto& ring = *step.ring;
    const auto place = [&](int j) { return step.place(j); };
    std::vector<OpIndex> ready = step.ready;
    if (at.index >= lanes.k) continue;
    const int lane = at.index;
    if (at.site > 0) {
      b.send(lanes.sites[0][lane], place(lane), kAnyLane, ready);
      continue;
    }
    OpIndex combined = kNoOp;
    for (std::size_t s = 1; s < lanes.sites.size(); ++s) {
      std::vector<OpIndex> deps = ready;
      deps.push_back(combined);
      combined = b.recv_reduce(lanes.sites[s][lane], place(lane), kAnyLane, deps);
    }
    ready.push_back(combined);
    if (r != root) {
      b.send(root, place(lane), kAnyLane, ready);
    } else {
      for (int i = 1; i < lanes.k; ++i) b.recv(ring[i], place(i), kAnyLane, ready);
    }
  }
  return b.finish();
}

Schedule reduce_scatter_multilane_sites(const Platform& platform, const BuildParams& params) {
  const Lanes lanes = plan_lanes(platform, params);
  const int p = platform.num_ranks();
  const Pieces blocks = reduce_scatter_blocks(params, p);
  const std::uint64_t all = blocks.bounds.back();
  // Chunk i: blocks [first_block(i), first_block(i+1)), whole blocks only.
  const auto first_block = [&](int i) { return i * p / lanes.k; };
  Pieces chunks;
  for (int i = 0; i <= lanes.k; ++i) chunks.bounds.push_back(blocks.offset(first_block(i)));
  const auto block = [&](Buffer buffer, int j) { return blocks.range(buffer, j, j + 1); };
  ScheduleBuilder b = lanes_builder(Collective::ReduceScatter, platform, params);
  std::vector<int> site_of(p);
  for (int r = 0; r < p; ++r) site_of[r] = lanes.site_of_rank(r);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    b.need_scratch(all);
    const SiteStep step = reduce_in_site(b, lanes, chunks, r, Buffer::Scratch);
    const Position at = step.at;
    const auto& ring = *step.ring;
    const std::vector<OpIndex>& ready = step.ready;
    const Range result{Buffer::Recv, 0, blocks.length(r)};
    // My block's chunk, and the lane leader of this site that hands it to me.
    const int my_chunk = [&] {
      int i = 0;
      while (first_block(i + 1) <= r) ++i;
      return i;
    }();
    if (at.index < lanes.k) {
      const int lane = at.index;
      // Step 2: the blocks of my chunk owned elsewhere go to their site's lane leader; the
      // blocks owned in my site come back combined from every other site's leader.
      for (int j = first_block(lane); j < first_block(lane + 1); ++j) {
        if (site_of[j] != at.site)
          b.send(lanes.sites[site_of[j]][lane], block(Buffer::Scratch, j), kAnyLane, ready);
      }
      std::vector<OpIndex> combined = ready;
      for (int j = first_block(lane); j < first_block(lane + 1); ++j) {
        if (site_of[j] != at.site) continue;
        OpIndex last = kNoOp;
        for (std::size_t s = 0; s < lanes.sites.size(); ++s) {
          if (static_cast<int>(s) == at.site) continue;
          std::vector<OpIndex> deps = ready;
          deps.push_back(last);
          last = b.recv_reduce(lanes.sites[s][lane], block(Buffer::Scratch, j), kAnyLane, deps);
        }
        // Step 3: the block to its owner.
        std::vector<OpIndex> deps = ready;
        deps.push_back(last);
        if (j == r) {
          b.copy(result, block(Buffer::Scratch, j), deps);
        } else {
          b.send(j, block(Buffer::Scratch, j), kAnyLane, deps);
        }
      }
    }
    if (ring[my_chunk] != r) b.recv(ring[my_chunk], result, kAnyLane, {});
  }
  return b.finish();
}

}  // namespace multilane::algo
