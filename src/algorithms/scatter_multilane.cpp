// scatter_multilane.cpp — the multi-lane scatter/gather of Chiba, Endo and Matsuoka (IPSJ
// 2008): P node pairs cross the WAN at once instead of one representative connection.
//
//   step 1  the root sends to P-1 "Dep_send" ranks of its site the blocks they will carry;
//   step 2  each Dep_send, as soon as it has them, and the root, once step 1 is done, ship
//           their share over the WAN to a "Dep_recv" partner in the remote site;
//   step 3  each Dep_recv hands its share out in its site; the root serves its own site.
//
// With per-rank counts (scatterv, gatherv) the schedule is the same, each block its own size;
// the pair model then prices the largest block.
// A remote site's ranks are split into P consecutive shares (sizes differ by at most one),
// the Dep_recv of a share being its first rank. P is given, or chosen per remote site by the
// paper's cost model (wan_pairs.hpp). With several remote sites, the same P senders of the
// root's site carry the shares of every site. Gather is the same schedule reversed.
#include <algorithm>
#include <vector>

#include "blocks.hpp"
#include "builders.hpp"
#include "multilane/wan_pairs.hpp"
#include "rank_order.hpp"

namespace multilane::algo {

namespace {

// One WAN pair's share: `sender` (in the root's site) carries `ranks` to ranks.front().
struct Share {
  int sender;
  std::vector<int> ranks;
  int receiver() const { return ranks.front(); }
};

int pairs_for_site(const Platform& platform, const BuildParams& params, int site, int n0, int n1) {
  const int most = std::min(n0, n1);
  if (params.wan_pairs > 0) return std::min(params.wan_pairs, most);
  return std::min(optimal_wan_pairs(wan_pairs_inputs(platform, params.root, site), params.size),
                  most);
}

std::vector<Share> plan_shares(const Platform& platform, const BuildParams& params,
                               int* pairs_used) {
  const auto groups = ranks_by_site(platform, params.root);
  const auto sites = site_order(platform, params.root);
  const auto& home = groups.front();
  std::vector<Share> shares;
  *pairs_used = 0;
  for (std::size_t s = 1; s < groups.size(); ++s) {
    const auto& remote = groups[s];
    const int n1 = static_cast<int>(remote.size());
    const int pairs = pairs_for_site(platform, params, sites[s], static_cast<int>(home.size()), n1);
    *pairs_used = std::max(*pairs_used, pairs);
    std::size_t next = 0;
    for (int j = 0; j < pairs; ++j) {
      const std::size_t count = n1 / pairs + (j < n1 % pairs ? 1 : 0);
      shares.push_back(
          {home[j], std::vector<int>(remote.begin() + next, remote.begin() + next + count)});
      next += count;
    }
  }
  return shares;
}

void emit_root(ScheduleBuilder& b, int root, int p, const std::vector<int>& home,
               const std::vector<Share>& shares, const BlockSizes& size) {
  const HeldBlocks held = hold_at_root(b, root, p, size);
  OpIndex previous = kNoOp;
  for (const Share& s : shares) {  // step 1: load the Dep_send ranks
    if (s.sender != root) previous = send_after(b, s.sender, s.ranks, size, held, previous);
  }
  for (const Share& s : shares) {  // step 2: the root's own WAN pairs
    if (s.sender == root) {
      previous = send_after(b, s.receiver(), s.ranks, size, held, previous, kWanLane);
    }
  }
  hand_out(b, root, home, size, held, previous);  // step 3: the root's site
}

void emit_dep_send(ScheduleBuilder& b, int self, int root, const std::vector<Share>& shares,
                   const BlockSizes& size) {
  std::vector<int> carried;
  for (const Share& s : shares) {
    if (s.sender == self) carried.insert(carried.end(), s.ranks.begin(), s.ranks.end());
  }
  b.need_scratch(size.of(carried));
  const BlockStore store = scratch_store(carried, size);
  for (const Share& s : shares) {
    if (s.sender != self) continue;
    const auto arrived = recv_blocks(b, root, s.ranks, size, store);
    send_blocks(b, s.receiver(), s.ranks, size, store, arrived, kWanLane);
  }
  receive_carried(b, self, root, {self}, size);  // its own block comes last, in step 3
}

}  // namespace

Schedule scatter_multilane(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const int root = params.root;
  int pairs = 0;  // scatter_multilane_wan_pairs()
  const auto shares = plan_shares(platform, params, &pairs);
  const auto home = ranks_by_site(platform, root).front();

  // Each rank's role: which share it receives for (as Dep_recv) or belongs to.
  std::vector<int> share_of(p, -1);
  std::vector<bool> is_sender(p, false);
  for (std::size_t i = 0; i < shares.size(); ++i) {
    for (int u : shares[i].ranks) share_of[u] = static_cast<int>(i);
    is_sender[shares[i].sender] = true;
  }

  const BlockSizes sizes(params.size, params.counts);
  ScheduleBuilder b(Collective::Scatter, "multilane", p, root, params.size, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    if (r == root) {
      emit_root(b, r, p, home, shares, sizes);
    } else if (is_sender[r]) {
      emit_dep_send(b, r, root, shares, sizes);
    } else if (share_of[r] < 0) {
      receive_carried(b, r, root, {r}, sizes);  // the root's site
    } else if (const Share& s = shares[share_of[r]]; s.receiver() == r) {
      hand_out(b, r, s.ranks, sizes, receive_carried(b, r, s.sender, s.ranks, sizes, kWanLane));
    } else {
      receive_carried(b, r, s.receiver(), {r}, sizes);
    }
  }
  return b.finish();
}

int scatter_multilane_wan_pairs(const Platform& platform, const BuildParams& params) {
  int pairs = 0;
  plan_shares(platform, params, &pairs);
  return pairs;
}

Schedule gather_multilane(const Platform& platform, const BuildParams& params) {
  return reverse_schedule(scatter_multilane(platform, params), Collective::Gather, "multilane");
}

}  // namespace multilane::algo
