// Closed forms of the two-level SMP collectives (algorithms hier-shm, hier-shm-vdg and
// hier-shm:X; the SMP paper, sec. 5.1): as the paper assumes no overlap between the levels, the
// time is the sum of the inter-node part (the leaders' algorithm, over A nodes) and the intra-node
// part. With L the most ranks on a node, B the default buffer (runtime/shm: 32 KiB), k =
// ceil(m / B), c the node's copy bandwidth and sync its sync latency, Table 1's decomposition
// costs k stages of sync plus the copies in and out of shared memory (readers of one buffer
// copy concurrently):
//   bcast      m = M:      k·sync + 2·M/c
//   scatter    m = L·s:    m ≤ B: sync + L·s/c;  else (L-1)·ceil(s/B)·sync + L·s/c
//   gather     the same as scatter
//   allgather  group gather (L·s) + leaders exchange + group bcast of p·s; one node: one group
//              allgather, ceil(L·s/B)·sync + (L+1)·s/c (its block in, every block out)
//   alltoall   m = L²·s ≤ B: sync + 2·L·s/c;  else (L-1)·(ceil(s/B)·sync + 2·s/c)
// A group call whose block (a bcast's message) reaches the site's single_copy_from copies every
// byte once instead (runtime/shm single copy): one stage, and each direct copy of x bytes costs
// d(x) = single_copy_latency + x / single_copy_bandwidth:
//   bcast      sync + max((L-1)·d(x), d(M - x))     the root puts the last x bytes into each
//                                           reader while the readers get the rest
//   scatter    sync + max(s/c + (L-1)·d(x), d(s - x))   the root copies its own block and x of
//              every other one; gather the same
//   where x is the share the runtime learns, the one at which both sides finish together
//   (runtime/shm/root_share.hpp), within 0..3/4 of a block
//   allgather, alltoall (one group call)   max(sync, s/c) + (L-1)·d(s)   every rank gets the
//              L-1 other blocks; its own it copies while it waits for the others to expose
// Inter-node: bcast the leaders' binomial (van de Geijn for hier-shm-vdg) closed form; scatter
// a flat tree, l + Σ(o + L·s/b) (b over the WAN: one connection per lane), gather the same with
// every node's latency, Σ(l + o + L·s/b) (flat_tree below); allgather every leader to every other
// at once, l + (A-1)·(o + L·s/b); alltoall pair-wise between nodes, all L ranks of a node sharing
// its lanes: (p-L)·(l + o + L·s/b). hier-shm:X: X's own closed form on the leaders' platform
// (bcast: the message; scatter, gather, allgather: a node's L·s bytes as one block, and only
// when every node holds L ranks: else the builder falls back to the flat tree / exchange, and
// so does the form). When X has no closed form there, neither has hier-shm:X.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "model/forms.hpp"
#include "multilane/model.hpp"

namespace multilane::model {

namespace {

constexpr double kBufferSize = 32 * 1024;  // runtime/shm's default B

struct Nodes {
  std::vector<int> ranks;  // per node with ranks, in node order (the leaders' order)
  int most_ranks = 1;      // L
  bool equal = true;       // every node with ranks holds L of them
  Platform leaders;        // one rank per node with ranks, the root's node's first rank = root
  int root_node = 0;       // the root's position among them
  int count() const { return static_cast<int>(ranks.size()); }  // A: nodes with ranks
};

Nodes nodes_of(const Platform& platform, int root) {
  Nodes n;
  std::vector<int> ranks_on(platform.nodes.size(), 0);
  for (int r = 0; r < platform.num_ranks(); ++r) ++ranks_on[platform.node_of(r)];
  n.leaders = platform;
  n.leaders.ranks.clear();
  for (std::size_t i = 0; i < ranks_on.size(); ++i) {
    if (ranks_on[i] == 0) continue;
    if (static_cast<int>(i) == platform.node_of(root)) n.root_node = n.count();
    n.leaders.ranks.push_back({static_cast<int>(i), 0});
    n.most_ranks = std::max(n.most_ranks, ranks_on[i]);
    n.ranks.push_back(ranks_on[i]);
  }
  for (int on : ranks_on) n.equal = n.equal && (on == 0 || on == n.most_ranks);
  return n;
}

const SharedMemory& shm_of(const Platform& platform, const BuildParams& p) {
  return platform.sites[platform.site_of(p.root)].shm;
}

double stages(double bytes) {
  return std::max(1.0, std::ceil(bytes / kBufferSize));
}

// One direct copy of `bytes` from one rank's memory into another's.
double direct_copy(const SharedMemory& shm, double bytes) {
  return shm.single_copy_latency_s + bytes / shm.single_copy_bps;
}

// A single-copy bcast, scatter or gather on L ranks of blocks of s bytes: the root copies
// `own` seconds of its own block and a share x of every other block, the others the rest of
// theirs. The runtime learns the x at which both finish together (runtime/shm/root_share.hpp):
// own + (L-1) d(x) = d(s - x), with d a direct copy, within 0..3/4 of a block.
double rooted_once(const SharedMemory& shm, int L, double own, double s) {
  const double bps = shm.single_copy_bps;
  const double lat = shm.single_copy_latency_s;
  const double x = std::clamp((s / bps - own - (L - 2) * lat) * bps / L, 0.0, 0.75 * s);
  const double root = own + (x > 0 ? (L - 1) * direct_copy(shm, x) : 0);
  return shm.sync_latency_s + std::max(root, direct_copy(shm, s - x));
}

double intra_bcast(const SharedMemory& shm, int L, double m) {
  if (L == 1) return 0;
  if (shm.copies_once(m)) return rooted_once(shm, L, 0, m);
  return stages(m) * shm.sync_latency_s + 2 * m / shm.copy_bps;
}

// Scatter and gather of blocks of s bytes.
double intra_blocks(const SharedMemory& shm, int L, double s) {
  if (L == 1) return 0;
  if (shm.copies_once(s)) return rooted_once(shm, L, s / shm.copy_bps, s);
  const double syncs = L * s <= kBufferSize ? 1 : (L - 1) * stages(s);
  return syncs * shm.sync_latency_s + L * s / shm.copy_bps;
}

// One group allgather or alltoall of blocks of s bytes, copied once: every rank gets the L-1
// other blocks.
double intra_exchange_once(const SharedMemory& shm, int L, double s) {
  return std::max(shm.sync_latency_s, s / shm.copy_bps) + (L - 1) * direct_copy(shm, s);
}

// The two-level algorithm's name, for messages: hier-shm or hier-shm:X.
std::string two_level_name(const BuildParams& p) {
  return p.leaders_algorithm.empty() ? "hier-shm" : fmt::format("hier-shm:{}", p.leaders_algorithm);
}

// The leaders' part: `algorithm`'s own closed form on the leaders' platform, `size` bytes per
// leader. Its UsageError (no form there) names the two-level algorithm.
double between_leaders(const Figures& f, const Nodes& n, Collective c, std::string_view algorithm,
                       const BuildParams& p, std::string_view two_level, double size) {
  BuildParams leaders = p;
  leaders.root = n.root_node;
  leaders.size = static_cast<std::uint64_t>(size);
  leaders.leaders_algorithm = {};
  try {
    return model_time(n.leaders, c, algorithm, leaders, f.overhead_s);
  } catch (const UsageError& e) {
    throw UsageError(
        fmt::format("{} {}: between the node leaders: {}", to_string(c), two_level, e.what()));
  }
}

double bcast_over(const Figures& f, const Platform& platform, const BuildParams& p,
                  std::string_view inter, std::string_view name) {
  const Nodes n = nodes_of(platform, p.root);
  const double m = static_cast<double>(p.size);
  return between_leaders(f, n, Collective::Bcast, inter, p, name, m) +
         intra_bcast(shm_of(platform, p), n.most_ranks, m);
}

double bcast_hier(const Figures& f, const Platform& platform, const BuildParams& p) {
  const std::string_view inter = p.leaders_algorithm.empty() ? "binomial" : p.leaders_algorithm;
  return bcast_over(f, platform, p, inter, two_level_name(p));
}

double bcast_hier_vdg(const Figures& f, const Platform& platform, const BuildParams& p) {
  return bcast_over(f, platform, p, "vandegeijn", "hier-shm-vdg");
}

// Whether the leaders run hier-shm:X's X (every node holds the same number of ranks), rather
// than the plain hier-shm exchange.
bool leaders_run_x(const Nodes& n, const BuildParams& p) {
  return !p.leaders_algorithm.empty() && n.equal;
}

// Plain hier-shm's flat tree (and hier-shm:X's on uneven nodes): the root's leader sends every
// other node its L_k·s bytes, one node after the other from the root's node on, over all its
// lanes (a WAN hop: one connection per lane). A send follows the one before as soon as that
// has left, so a scatter waits for one latency, the last node's. A gather's receives follow each
// other the same way, but each starts only once the one before has arrived: every node's
// latency counts, as in the SMP paper's A·(α + βm).
double flat_tree(Collective c, const Figures& f, const Nodes& n, double s) {
  if (f.sites() > 2) {
    throw UsageError(
        fmt::format("{} hier-shm: closed form for one or two sites only", to_string(c)));
  }
  const int root_site = n.leaders.site_of(n.root_node);
  double busy = 0, finish = 0;
  for (int k = 1; k < n.count(); ++k) {
    const int node = (n.root_node + k) % n.count();
    const bool local = n.leaders.site_of(node) == root_site;
    const double latency = local ? f.lan_s : f.wan_s;
    const double rate = local ? f.node_bps : f.wan_rate(f.lanes);
    const double send = f.overhead_s + n.ranks[static_cast<std::size_t>(node)] * s / rate;
    if (c == Collective::Gather) {
      busy += latency + send;
      finish = busy;
    } else {
      busy += send;
      finish = std::max(finish, busy + latency);
    }
  }
  return finish;
}

double blocks_over(Collective c, const Figures& f, const Platform& platform, const BuildParams& p) {
  const Nodes n = nodes_of(platform, p.root);
  const double s = static_cast<double>(p.size);
  const double inter = leaders_run_x(n, p) ? between_leaders(f, n, c, p.leaders_algorithm, p,
                                                             two_level_name(p), n.most_ranks * s)
                                           : flat_tree(c, f, n, s);
  return inter + intra_blocks(shm_of(platform, p), n.most_ranks, s);
}

double scatter_hier(const Figures& f, const Platform& platform, const BuildParams& p) {
  return blocks_over(Collective::Scatter, f, platform, p);
}

double gather_hier(const Figures& f, const Platform& platform, const BuildParams& p) {
  return blocks_over(Collective::Gather, f, platform, p);
}

double allgather_hier(const Figures& f, const Platform& platform, const BuildParams& p) {
  const Nodes n = nodes_of(platform, p.root);
  const double s = static_cast<double>(p.size);
  const SharedMemory& shm = shm_of(platform, p);
  const int L = n.most_ranks;
  if (n.count() == 1 && L > 1) {  // one group allgather (algorithms/hier_shm.cpp)
    if (shm.copies_once(s)) return intra_exchange_once(shm, L, s);
    return stages(L * s) * shm.sync_latency_s + (L + 1) * s / shm.copy_bps;
  }
  double inter = 0;
  if (n.count() > 1) {
    inter = leaders_run_x(n, p)
                ? between_leaders(f, n, Collective::Allgather, p.leaders_algorithm, p,
                                  two_level_name(p), n.most_ranks * s)
                : f.lan_s + (n.count() - 1) * (f.overhead_s + n.most_ranks * s / f.node_bps);
  }
  return intra_blocks(shm, n.most_ranks, s) + inter + intra_bcast(shm, n.most_ranks, f.p * s);
}

double alltoall_hier(const Figures& f, const Platform& platform, const BuildParams& p) {
  const Nodes n = nodes_of(platform, p.root);
  const int L = n.most_ranks;
  const double s = static_cast<double>(p.size);
  const SharedMemory& shm = shm_of(platform, p);
  double intra = 0;
  if (L > 1 && shm.copies_once(s)) {
    intra = intra_exchange_once(shm, L, s);
  } else if (L > 1) {
    intra = static_cast<double>(L) * L * s <= kBufferSize
                ? shm.sync_latency_s + 2 * L * s / shm.copy_bps
                : (L - 1) * (stages(s) * shm.sync_latency_s + 2 * s / shm.copy_bps);
  }
  return (f.p - L) * (f.lan_s + f.overhead_s + L * s / f.node_bps) + intra;
}

constexpr std::array kForms = {
    FormEntry{Collective::Bcast, "hier-shm", bcast_hier},
    FormEntry{Collective::Bcast, "hier-shm-vdg", bcast_hier_vdg},
    FormEntry{Collective::Scatter, "hier-shm", scatter_hier},
    FormEntry{Collective::Gather, "hier-shm", gather_hier},
    FormEntry{Collective::Allgather, "hier-shm", allgather_hier},
    FormEntry{Collective::Alltoall, "hier-shm", alltoall_hier},
};

}  // namespace

std::span<const FormEntry> hier_forms() {
  return kForms;
}

}  // namespace multilane::model
