// hier_shm.cpp — the SMP paper's two-level collectives (tunable-smp-collectives.txt): node
// leaders talk over the network, the ranks of a node share memory through one group operation
// (schedule.hpp's Group* ops; the runtime runs each as the paper's Table 1 decomposition, with
// its switch points, through runtime/shm). As in the paper the two levels do not overlap
// within a node, except where they touch disjoint bytes.
//
//   bcast hier-shm       binomial tree among the leaders, then a group bcast on every node
//   bcast hier-shm-vdg   van de Geijn (scatter + allgather) among the leaders only, then a
//                        group bcast (the paper's modified two-stage algorithm, sec. 8.4)
//   scatter hier-shm     the root sends every other leader its node's blocks (flat tree,
//                        one node after the other), then a group scatter on every node
//   gather hier-shm      the scatter with every arrow reversed
//   allgather hier-shm   group gather to the leader, leaders exchange their nodes' blocks,
//                        group bcast of the whole result (one node: one group allgather)
//   alltoall hier-shm    a group alltoall of the blocks that stay on the node; blocks to
//                        other nodes go pair-wise (the paper's choice, sec. 8.3)
//
// `hier-shm:X` (bcast, scatter, gather, allgather) runs algorithm X of the collective between
// the leaders instead (sec. 4: the best inter-node algorithm is found by experiment): X's
// schedule is built on the leaders' platform and replayed into theirs (replay_program). For
// scatter, gather and allgather a leader's block is its node's L blocks (L·s bytes), so X needs
// every node to hold the same number of ranks L. When they differ, the node blocks differ in
// size and no fixed-block X can carry them: `hier-shm:X` then falls back to the plain
// `hier-shm` exchange (flat tree, or every leader to every other), as Open MPI's HAN does for
// irregular ranks per node; it never pads blocks with bytes nobody wrote. The root's blocks
// are read straight from Send, and the allgather's result lands straight in Recv, when the
// ranks are numbered node after node (rank = node·L + local rank); otherwise they are packed
// into (and unpacked from) Scratch.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "blocks.hpp"
#include "builders.hpp"
#include "hier_nodes.hpp"

namespace multilane::algo {

namespace {

Range whole(Buffer buffer, std::uint64_t length) {
  return {buffer, 0, length};
}

// The schedule's name: the name it was asked by (`hier-shm` or `hier-shm:X`).
std::string two_level_name(const BuildParams& params) {
  if (params.leaders_algorithm.empty()) return "hier-shm";
  return fmt::format("hier-shm:{}", params.leaders_algorithm);
}

// The leaders' part of a two-level collective: `algorithm` of `collective` on the leaders'
// platform, sub-rank i being nodes.groups[i]'s leader, with `size` bytes per leader.
struct LeadersPart {
  std::vector<int> leaders;
  Schedule sub;
};

LeadersPart leaders_part(const Platform& platform, const NodeGroups& nodes, Collective collective,
                         std::string_view algorithm, const BuildParams& params,
                         std::uint64_t size) {
  BuildParams sub = params;
  sub.root = nodes.root_group;
  sub.size = size;
  return {leader_ranks(nodes),
          build_schedule(leaders_platform(platform, nodes), collective, algorithm, sub)};
}

// The number of ranks every node holds, or 0 when nodes hold different numbers.
int common_node_size(const NodeGroups& nodes) {
  const int L = nodes.groups.front().size();
  for (const NodeGroup& g : nodes.groups) {
    if (g.size() != L) return 0;
  }
  return L;
}

// Whether member j of group g is rank g·L + j for every node: the nodes' blocks in node order
// are then the user's buffer as it is.
bool node_major(const NodeGroups& nodes, int L) {
  for (std::size_t g = 0; g < nodes.groups.size(); ++g) {
    for (int j = 0; j < L; ++j) {
      if (nodes.groups[g].members[j] != static_cast<int>(g) * L + j) return false;
    }
  }
  return true;
}

// Where the sub-schedule's own scratch may start: after the parts of Scratch placed for it.
std::uint64_t scratch_after(const SubPlacement& at) {
  std::uint64_t end = 0;
  for (const Range& r : {at.send, at.recv}) {
    if (r.buffer == Buffer::Scratch) end = std::max(end, r.end());
  }
  return end;
}

Schedule bcast_over_leaders(const Platform& platform, const BuildParams& params,
                            std::string_view inter, std::string name) {
  const NodeGroups nodes = node_groups(platform, params.root);
  const LeadersPart part =
      leaders_part(platform, nodes, Collective::Bcast, inter, params, params.size);
  ScheduleBuilder b(Collective::Bcast, std::move(name), platform.num_ranks(), params.root,
                    params.size, part.sub.segment);
  const Range message = whole(Buffer::Recv, params.size);
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    std::vector<OpIndex> arrived;
    if (r == node.leader) {
      arrived = replay_program(b, part.sub, nodes.group_of[r], part.leaders,
                               same_buffers(0, params.size));
    }
    if (node.size() == 1) continue;
    if (r == node.leader) {
      b.group(OpKind::GroupBcast, node.leader, kNothing, message, arrived);
    } else {
      b.group(OpKind::GroupBcast, node.leader, message, kNothing);
    }
  }
  return b.finish();
}

// The root's node's blocks in local-rank order: straight from Send when its ranks are
// consecutive, else packed into Scratch first. Returns the range and the packing copies.
Range root_node_blocks(ScheduleBuilder& b, const NodeGroup& node, std::uint64_t size,
                       std::vector<OpIndex>& packed) {
  if (const auto direct = consecutive_blocks(node, Buffer::Send, size)) return *direct;
  b.need_scratch(node.members.size() * size);
  for (int i = 0; i < node.size(); ++i) {
    packed.push_back(b.copy({Buffer::Scratch, i * size, size},
                            {Buffer::Send, node.members[i] * size, size}, {}));
  }
  return whole(Buffer::Scratch, node.members.size() * size);
}

// Plain hier-shm scatter, and any scatter whose nodes hold different numbers of ranks: the
// root sends the other leaders their nodes' blocks one node after the other (flat tree).
Schedule scatter_flat_tree(const Platform& platform, const NodeGroups& nodes,
                           const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  ScheduleBuilder b(Collective::Scatter, two_level_name(params), p, params.root, s, 0);
  const Range own = whole(Buffer::Recv, s);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    if (r == params.root) {
      // The other nodes one after the other (flat tree), from the root's node on.
      const BlockStore send = send_buffer_store(BlockSizes(s), p);
      OpIndex previous = kNoOp;
      const int n = static_cast<int>(nodes.groups.size());
      for (int k = 1; k < n; ++k) {
        const NodeGroup& other = nodes.groups[(nodes.root_group + k) % n];
        const OpIndex after[] = {previous};
        for (OpIndex sent :
             send_blocks(b, other.leader, other.members, BlockSizes(s), send, after)) {
          if (sent != kNoOp) previous = sent;
        }
      }
      if (node.size() == 1) {
        b.copy(own, {Buffer::Send, r * s, s}, {});
      } else {
        std::vector<OpIndex> packed;
        const Range blocks = root_node_blocks(b, node, s, packed);
        b.group(OpKind::GroupScatter, r, own, blocks, packed);
      }
    } else if (r == node.leader) {
      if (node.size() == 1) {
        recv_blocks(b, params.root, node.members, BlockSizes(s),
                    {Buffer::Recv, [](int) { return 0ull; }});
        continue;
      }
      b.need_scratch(node.members.size() * s);
      const auto arrived = recv_blocks(b, params.root, node.members, BlockSizes(s),
                                       scratch_store(node.members, BlockSizes(s)));
      b.group(OpKind::GroupScatter, r, own, whole(Buffer::Scratch, node.members.size() * s),
              arrived);
    } else {
      b.group(OpKind::GroupScatter, node.leader, own, kNothing);
    }
  }
  return b.finish();
}

// Every block of Send, node after node in local-rank order, packed into Scratch[0, p·s).
std::vector<OpIndex> pack_by_node(ScheduleBuilder& b, const NodeGroups& nodes, std::uint64_t s) {
  std::vector<OpIndex> packed;
  std::uint64_t at = 0;
  for (const NodeGroup& g : nodes.groups) {
    for (int rank : g.members) {
      packed.push_back(b.copy({Buffer::Scratch, at, s}, {Buffer::Send, rank * s, s}, {}));
      at += s;
    }
  }
  b.need_scratch(at);
  return packed;
}

// Scatter hier-shm:X with L ranks on every node: X scatters the nodes' L·s-byte blocks among
// the leaders, each leader hands its node's blocks out with a group scatter.
Schedule scatter_over_leaders(const Platform& platform, const NodeGroups& nodes, int L,
                              const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  const std::uint64_t node_bytes = L * s;
  const LeadersPart part = leaders_part(platform, nodes, Collective::Scatter,
                                        params.leaders_algorithm, params, node_bytes);
  ScheduleBuilder b(Collective::Scatter, two_level_name(params), p, params.root, s,
                    part.sub.segment);
  const bool in_place = node_major(nodes, L);
  const Range own = whole(Buffer::Recv, s);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    if (r != node.leader) {
      b.group(OpKind::GroupScatter, node.leader, own, kNothing);
      continue;
    }
    const int g = nodes.group_of[r];
    SubPlacement at;
    at.recv = L == 1 ? own : whole(Buffer::Scratch, node_bytes);
    if (r == params.root) {
      if (in_place) {
        at.send = whole(Buffer::Send, p * s);
      } else {
        at.send_ready = pack_by_node(b, nodes, s);
        at.send = whole(Buffer::Scratch, p * s);
      }
      // The root's node keeps its blocks where they are: X's copy of them is dropped.
      if (L > 1) at.recv = {at.send.buffer, at.send.offset + g * node_bytes, node_bytes};
    }
    at.scratch_offset = scratch_after(at);
    const auto ready = replay_program(b, part.sub, g, part.leaders, at);
    if (L > 1) b.group(OpKind::GroupScatter, r, own, at.recv, ready);
  }
  return b.finish();
}

// Plain hier-shm allgather, and any allgather whose nodes hold different numbers of ranks:
// every leader sends its node's blocks to every other leader.
Schedule allgather_exchange(const Platform& platform, const NodeGroups& nodes,
                            const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  ScheduleBuilder b(Collective::Allgather, two_level_name(params), p, params.root, s, 0);
  const Range mine = whole(Buffer::Send, s);
  const Range all = whole(Buffer::Recv, p * s);
  const BlockStore recv{Buffer::Recv, [s](int u) { return u * s; }};
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    const int L = node.size();
    if (r != node.leader) {
      const OpIndex gathered = b.group(OpKind::GroupGather, node.leader, kNothing, mine);
      b.group(OpKind::GroupBcast, node.leader, all, kNothing, {gathered});
      continue;
    }
    // The node's blocks into their places in Recv.
    std::vector<OpIndex> placed;
    if (L == 1) {
      placed.push_back(b.copy({Buffer::Recv, r * s, s}, mine, {}));
    } else {
      b.need_scratch(L * s);
      const OpIndex gathered = b.group(OpKind::GroupGather, r, whole(Buffer::Scratch, L * s), mine);
      for (int i = 0; i < L; ++i) {
        placed.push_back(b.copy({Buffer::Recv, node.members[i] * s, s}, {Buffer::Scratch, i * s, s},
                                {gathered}));
      }
    }
    // Every leader sends its node's blocks to every other leader.
    std::vector<OpIndex> arrived = placed;
    for (const NodeGroup& other : nodes.groups) {
      if (other.leader == r) continue;
      send_blocks(b, other.leader, node.members, BlockSizes(s), recv, placed);
      for (OpIndex got : recv_blocks(b, other.leader, other.members, BlockSizes(s), recv)) {
        arrived.push_back(got);
      }
    }
    if (L > 1) b.group(OpKind::GroupBcast, r, kNothing, all, arrived);
  }
  return b.finish();
}

// Copies the nodes' blocks, held node after node in local-rank order from Scratch[from] on, to
// their places in Recv: one copy per run of consecutive ranks.
std::vector<OpIndex> unpack_by_node(ScheduleBuilder& b, const NodeGroups& nodes, std::uint64_t s,
                                    std::uint64_t from, std::span<const OpIndex> after) {
  std::vector<OpIndex> copies;
  for (const NodeGroup& g : nodes.groups) {
    for (const Run& run : block_runs(g.members)) {
      copies.push_back(b.copy({Buffer::Recv, g.members[run.first] * s, run.count * s},
                              {Buffer::Scratch, from + run.first * s, run.count * s}, after));
    }
    from += g.members.size() * s;
  }
  return copies;
}

// Allgather hier-shm:X with L ranks on every node: group gather of the node's blocks to its
// leader, X among the leaders with the L·s bytes of a node as one block, group bcast.
Schedule allgather_over_leaders(const Platform& platform, const NodeGroups& nodes, int L,
                                const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  const std::uint64_t node_bytes = L * s;
  const LeadersPart part = leaders_part(platform, nodes, Collective::Allgather,
                                        params.leaders_algorithm, params, node_bytes);
  ScheduleBuilder b(Collective::Allgather, two_level_name(params), p, params.root, s,
                    part.sub.segment);
  const bool in_place = node_major(nodes, L);
  const Range mine = whole(Buffer::Send, s);
  const Range all = whole(Buffer::Recv, p * s);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    if (r != node.leader) {
      const OpIndex gathered = b.group(OpKind::GroupGather, node.leader, kNothing, mine);
      b.group(OpKind::GroupBcast, node.leader, all, kNothing, {gathered});
      continue;
    }
    // X's result goes to Recv as it is, or to Scratch for unpacking. X's Send, the node's
    // blocks, is gathered straight into their place in that result (X's copy of them is
    // then dropped).
    SubPlacement at;
    at.recv = in_place ? all : whole(Buffer::Scratch, p * s);
    b.need_scratch(scratch_after(at));
    if (L == 1) {
      at.send = mine;
    } else {
      const int g = nodes.group_of[r];
      at.send = {at.recv.buffer, at.recv.offset + g * node_bytes, node_bytes};
      at.send_ready = {b.group(OpKind::GroupGather, r, at.send, mine)};
    }
    at.scratch_offset = scratch_after(at);
    auto ready = replay_program(b, part.sub, nodes.group_of[r], part.leaders, at);
    if (!in_place) ready = unpack_by_node(b, nodes, s, at.recv.offset, ready);
    if (L > 1) b.group(OpKind::GroupBcast, r, kNothing, all, ready);
  }
  return b.finish();
}

}  // namespace

Schedule bcast_hier_shm(const Platform& platform, const BuildParams& params) {
  const std::string_view inter =
      params.leaders_algorithm.empty() ? "binomial" : params.leaders_algorithm;
  return bcast_over_leaders(platform, params, inter, two_level_name(params));
}

Schedule bcast_hier_shm_vdg(const Platform& platform, const BuildParams& params) {
  return bcast_over_leaders(platform, params, "vandegeijn", "hier-shm-vdg");
}

Schedule scatter_hier_shm(const Platform& platform, const BuildParams& params) {
  const NodeGroups nodes = node_groups(platform, params.root);
  const int L = common_node_size(nodes);
  if (params.leaders_algorithm.empty() || L == 0) return scatter_flat_tree(platform, nodes, params);
  return scatter_over_leaders(platform, nodes, L, params);
}

int hier_shm_scatter_wan_pairs(const Platform& platform, const BuildParams& params) {
  const NodeGroups nodes = node_groups(platform, params.root);
  const int L = common_node_size(nodes);
  if (params.leaders_algorithm.empty() || L == 0) return 0;  // scatter_flat_tree()
  BuildParams sub = params;  // as leaders_part() of scatter_over_leaders()
  sub.root = nodes.root_group;
  sub.size = static_cast<std::uint64_t>(L) * params.size;
  return wan_pairs_used(leaders_platform(platform, nodes), Collective::Scatter,
                        params.leaders_algorithm, sub);
}

Schedule gather_hier_shm(const Platform& platform, const BuildParams& params) {
  return reverse_schedule(scatter_hier_shm(platform, params), Collective::Gather,
                          two_level_name(params));
}

Schedule allgather_hier_shm(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const NodeGroups nodes = node_groups(platform, params.root);
  if (nodes.groups.size() == 1 && p > 1) {
    // One node: nothing to exchange between leaders, so one group allgather, in place.
    ScheduleBuilder b(Collective::Allgather, two_level_name(params), p, params.root, params.size,
                      0);
    for (int r = 0; r < p; ++r) {
      b.start_rank(r);
      b.group(OpKind::GroupAllgather, nodes.groups[0].leader, whole(Buffer::Recv, p * params.size),
              whole(Buffer::Send, params.size));
    }
    return b.finish();
  }
  const int L = common_node_size(nodes);
  if (params.leaders_algorithm.empty() || L == 0)
    return allgather_exchange(platform, nodes, params);
  return allgather_over_leaders(platform, nodes, L, params);
}

Schedule alltoall_hier_shm(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  const NodeGroups nodes = node_groups(platform, params.root);
  ScheduleBuilder b(Collective::Alltoall, "hier-shm", p, params.root, s, 0);
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    const auto L = static_cast<std::uint64_t>(node.size());
    // Blocks to other nodes, pair-wise: in step k to r+k, from r-k.
    for (int k = 1; k < p; ++k) {
      const int to = (r + k) % p;
      const int from = (r - k + p) % p;
      if (nodes.group_of[to] != nodes.group_of[r]) b.send(to, {Buffer::Send, to * s, s});
      if (nodes.group_of[from] != nodes.group_of[r]) b.recv(from, {Buffer::Recv, from * s, s});
    }
    if (L == 1) {
      b.copy({Buffer::Recv, r * s, s}, {Buffer::Send, r * s, s}, {});
      continue;
    }
    // Blocks within the node: one group alltoall, on the user's buffers when the node's ranks
    // are consecutive, else packed into Scratch and unpacked after.
    const auto send = consecutive_blocks(node, Buffer::Send, s);
    const auto recv = consecutive_blocks(node, Buffer::Recv, s);
    if (send && recv) {
      b.group(OpKind::GroupAlltoall, node.leader, *recv, *send);
      continue;
    }
    b.need_scratch(2 * L * s);
    std::vector<OpIndex> packed;
    for (std::uint64_t i = 0; i < L; ++i) {
      packed.push_back(
          b.copy({Buffer::Scratch, i * s, s}, {Buffer::Send, node.members[i] * s, s}, {}));
    }
    const OpIndex exchanged =
        b.group(OpKind::GroupAlltoall, node.leader, {Buffer::Scratch, L * s, L * s},
                whole(Buffer::Scratch, L * s), packed);
    for (std::uint64_t i = 0; i < L; ++i) {
      b.copy({Buffer::Recv, node.members[i] * s, s}, {Buffer::Scratch, (L + i) * s, s},
             {exchanged});
    }
  }
  return b.finish();
}

}  // namespace multilane::algo
