// allgather_sites.cpp — the site-aware allgather (`multilane-sites`, also allgatherv): every
// pair of sites exchanges its blocks across the WAN once, on k lanes at once.
//
//   step 1  inside every site, a ring allgather: each rank gets its site's blocks;
//   step 2  the site's blocks are cut into k parts of consecutive members (balanced by bytes);
//           lane leader i (on a node of its own where the site has k nodes, site_parts.hpp)
//           sends part i to lane leader i of every other site and receives that site's part
//           i: k pairs cross between two sites at once, each carrying 1/k of the site's bytes,
//           once in each direction;
//   step 3  each lane leader hands the remote parts it received to every other rank of its
//           site, so that the site's uplinks share the fan-out.
//
//      site 0                 site 1           k = 2: the blocks of a0 a1 go on lane 0,
//    a0  a1  a2  a3         b0  b1  b2         those of a2 a3 on lane 1, and back the same way
//    [ring in site]         [ring in site]     with site 1's; then a0 and a1 (b0 and b1) give
//    a0 ===== lane 0 ====== b0                 what they got to the rest of their site.
//    a1 ===== lane 1 ====== b1
//
// k is BuildParams::wan_pairs when given, else the smallest site's rank count, at most that.
// The ring of step 1 and the pushes of step 3 run on the LAN, the parts of step 2 on lane 0
// of each node (one connection per node pair, as the scatter/gather paper's pairs).
#include <algorithm>
#include <vector>

#include "blocks.hpp"
#include "builders.hpp"
#include "multilane/collective.hpp"
#include "site_parts.hpp"

namespace multilane::algo {

namespace {

// Where every block lies in Recv.
BlockStore recv_store(const BlockSizes& sizes, int p) {
  BlockStore store = send_buffer_store(sizes, p);
  store.buffer = Buffer::Recv;
  return store;
}

}  // namespace

Schedule allgather_multilane_sites(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const SiteLanes lanes = plan_site_lanes(platform, params);
  const BlockSizes sizes(params.size, params.counts);
  const BlockStore recv = recv_store(sizes, p);
  const auto block = [&](int u) { return Range{Buffer::Recv, recv.offset_of(u), sizes.of(u)}; };
  std::vector<std::vector<std::vector<int>>> parts;  // [site][lane]: members carried
  for (const auto& members : lanes.sites) parts.push_back(lane_parts(members, lanes.k, sizes));

  ScheduleBuilder b(Collective::Allgather, "multilane-sites", p, params.root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const int s = lanes.site_of[r];
    const std::vector<int>& members = lanes.sites[s];
    const int n = static_cast<int>(members.size());
    const int q = static_cast<int>(std::find(members.begin(), members.end(), r) - members.begin());

    // Step 1: ring allgather inside the site.
    std::vector<OpIndex> site_ready{b.copy(block(r), Range{Buffer::Send, 0, sizes.of(r)}, {})};
    OpIndex last = site_ready.front();
    for (int step = 0; step + 1 < n; ++step) {
      b.send(members[(q + 1) % n], block(members[(q - step + n) % n]), kAnyLane, {last});
      last = b.recv(members[(q - 1 + n) % n], block(members[(q - step - 1 + n) % n]), kAnyLane, {});
      site_ready.push_back(last);
    }
    const std::vector<int>& leaders = lanes.leaders[s];
    const int lane = lanes.lane_of[r];
    if (lane < 0) {  // not a lane leader: the remote parts come from the site's leaders
      for (int i = 0; i < lanes.k; ++i) {
        for (std::size_t t = 0; t < lanes.sites.size(); ++t) {
          if (static_cast<int>(t) != s) recv_blocks(b, leaders[i], parts[t][i], sizes, recv);
        }
      }
      continue;
    }
    // Step 2: this lane to the same lane of every other site, both ways.
    std::vector<OpIndex> remote;
    for (std::size_t t = 0; t < lanes.sites.size(); ++t) {
      if (static_cast<int>(t) == s) continue;
      const int partner = lanes.leaders[t][lane];
      send_blocks(b, partner, parts[s][lane], sizes, recv, site_ready, kWanLane);
      for (OpIndex got : recv_blocks(b, partner, parts[t][lane], sizes, recv, kWanLane)) {
        remote.push_back(got);
      }
    }
    // Step 3: what arrived goes to the rest of the site; the other leaders' parts come in.
    for (int j = 0; j < n; ++j) {
      if (j == q) continue;
      for (std::size_t t = 0; t < lanes.sites.size(); ++t) {
        if (static_cast<int>(t) != s) {
          send_blocks(b, members[j], parts[t][lane], sizes, recv, remote);
        }
      }
    }
    for (int i = 0; i < lanes.k; ++i) {
      if (i == lane) continue;
      for (std::size_t t = 0; t < lanes.sites.size(); ++t) {
        if (static_cast<int>(t) != s) recv_blocks(b, leaders[i], parts[t][i], sizes, recv);
      }
    }
  }
  return b.finish();
}

}  // namespace multilane::algo
