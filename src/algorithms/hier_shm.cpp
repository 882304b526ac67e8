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
#include <vector>

#include "blocks.hpp"
#include "builders.hpp"
#include "hier_nodes.hpp"

namespace multilane::algo {

namespace {

Range whole(Buffer buffer, std::uint64_t length) {
  return {buffer, 0, length};
}

Schedule bcast_over_leaders(const Platform& platform, const BuildParams& params,
                            std::string_view inter, std::string name) {
  const NodeGroups nodes = node_groups(platform, params.root);
  const std::vector<int> leaders = leader_ranks(nodes);
  BuildParams sub_params = params;
  sub_params.root = nodes.root_group;
  const Schedule sub =
      build_schedule(leaders_platform(platform, nodes), Collective::Bcast, inter, sub_params);
  ScheduleBuilder b(Collective::Bcast, std::move(name), platform.num_ranks(), params.root,
                    params.size, sub.segment);
  const Range message = whole(Buffer::Recv, params.size);
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    std::vector<OpIndex> arrived;
    if (r == node.leader) arrived = replay_program(b, sub, nodes.group_of[r], leaders);
    if (node.size() == 1) continue;
    if (r == node.leader) {
      b.group(OpKind::GroupBcast, node.leader, {Buffer::Recv, 0, 0}, message, arrived);
    } else {
      b.group(OpKind::GroupBcast, node.leader, message, {Buffer::Recv, 0, 0});
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

}  // namespace

Schedule bcast_hier_shm(const Platform& platform, const BuildParams& params) {
  return bcast_over_leaders(platform, params, "binomial", "hier-shm");
}

Schedule bcast_hier_shm_vdg(const Platform& platform, const BuildParams& params) {
  return bcast_over_leaders(platform, params, "vandegeijn", "hier-shm-vdg");
}

Schedule scatter_hier_shm(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  const NodeGroups nodes = node_groups(platform, params.root);
  ScheduleBuilder b(Collective::Scatter, "hier-shm", p, params.root, s, 0);
  const Range own = whole(Buffer::Recv, s);
  const Range none{Buffer::Recv, 0, 0};
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    if (r == params.root) {
      // The other nodes one after the other (flat tree), from the root's node on.
      const BlockStore send = send_buffer_store(s);
      OpIndex previous = kNoOp;
      const int n = static_cast<int>(nodes.groups.size());
      for (int k = 1; k < n; ++k) {
        const NodeGroup& other = nodes.groups[(nodes.root_group + k) % n];
        const OpIndex after[] = {previous};
        for (OpIndex sent : send_blocks(b, other.leader, other.members, s, send, after)) {
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
        recv_blocks(b, params.root, node.members, s, {Buffer::Recv, [](int) { return 0ull; }});
        continue;
      }
      b.need_scratch(node.members.size() * s);
      const auto arrived =
          recv_blocks(b, params.root, node.members, s, scratch_store(node.members, s));
      b.group(OpKind::GroupScatter, r, own, whole(Buffer::Scratch, node.members.size() * s),
              arrived);
    } else {
      b.group(OpKind::GroupScatter, node.leader, own, none);
    }
  }
  return b.finish();
}

Schedule gather_hier_shm(const Platform& platform, const BuildParams& params) {
  return reverse_schedule(scatter_hier_shm(platform, params), Collective::Gather, "hier-shm");
}

Schedule allgather_hier_shm(const Platform& platform, const BuildParams& params) {
  const int p = platform.num_ranks();
  const std::uint64_t s = params.size;
  const NodeGroups nodes = node_groups(platform, params.root);
  ScheduleBuilder b(Collective::Allgather, "hier-shm", p, params.root, s, 0);
  const Range mine = whole(Buffer::Send, s);
  const Range all = whole(Buffer::Recv, p * s);
  const BlockStore recv{Buffer::Recv, [s](int u) { return u * s; }};
  if (nodes.groups.size() == 1 && p > 1) {
    // One node: nothing to exchange between leaders, so one group allgather, in place.
    for (int r = 0; r < p; ++r) {
      b.start_rank(r);
      b.group(OpKind::GroupAllgather, nodes.groups[0].leader, all, mine);
    }
    return b.finish();
  }
  for (int r = 0; r < p; ++r) {
    b.start_rank(r);
    const NodeGroup& node = nodes.of(r);
    const int L = node.size();
    if (r != node.leader) {
      const OpIndex gathered =
          b.group(OpKind::GroupGather, node.leader, {Buffer::Recv, 0, 0}, mine);
      b.group(OpKind::GroupBcast, node.leader, all, {Buffer::Recv, 0, 0}, {gathered});
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
      send_blocks(b, other.leader, node.members, s, recv, placed);
      for (OpIndex got : recv_blocks(b, other.leader, other.members, s, recv)) {
        arrived.push_back(got);
      }
    }
    if (L > 1) b.group(OpKind::GroupBcast, r, {Buffer::Recv, 0, 0}, all, arrived);
  }
  return b.finish();
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
