// hier_shm_reduce.cpp — reduce and allreduce through each node's shared memory, every core
// combining a slice (the SMP paper's framework extended to reduction), the slices crossing the
// network on rails (the lane decomposition of Träff-Hunold 2020: local rank j of every node
// forms rail j).
//
//   node   L ranks, the vector cut into k slices (k: the smallest node's rank count)
//   step 1 slice j of every rank's input to local rank j, which combines the L copies (every
//          core combines one slice, all at once): one group alltoall when every node holds L
//          ranks (allreduce), else k group gathers
//   step 2 rail j (local rank j of every node) combines slice j across the nodes: allreduce
//          by recursive doubling; reduce into the root's node
//   step 3 slice j from local rank j to the node: one group allgather (allreduce on equal
//          nodes), else k group bcasts (reduce: on the root's node)
//
//        node 0                      node 1
//    r0  r1  r2  r3              r4  r5  r6  r7
//    [s0][s1][s2][s3]  rail j:   [s0][s1][s2][s3]     every rank combines one slice of its
//     |   |   |   |  <------->    |   |   |   |       node, and all four rails cross the
//                                                      network at once
// A node of one rank has no group op: its slice is its whole input (k = 1 then everywhere).
#include <algorithm>
#include <vector>

#include "builders.hpp"
#include "hier_nodes.hpp"
#include "reduce_steps.hpp"

namespace multilane::algo {

namespace {

struct Slices {
  NodeGroups nodes;
  int k = 1;
  Pieces pieces;              // slice j: pieces j
  std::uint64_t largest = 0;  // bytes of the largest slice
  int rail_rank(int node_group, int j) const { return nodes.groups[node_group].members[j]; }
};

Slices plan_slices(const Platform& platform, const BuildParams& params) {
  Slices s;
  s.nodes = node_groups(platform, params.root);
  s.k = s.nodes.groups.front().size();
  for (const NodeGroup& g : s.nodes.groups) s.k = std::min(s.k, g.size());
  s.pieces = even_pieces(params.size, s.k, params.element_size);
  for (int j = 0; j < s.k; ++j) s.largest = std::max(s.largest, s.pieces.length(j));
  return s;
}

// Scratch of a rank: the gathered copies of its slice (L of them), then its accumulator (the
// vector's offsets, where the rank's Recv cannot hold it), then a partner's slice.
struct ScratchLayout {
  std::uint64_t gathered = 0;
  std::uint64_t accumulator = 0;
  std::uint64_t incoming = 0;
  std::uint64_t end = 0;
};

ScratchLayout scratch_layout(const Slices& s, int members, std::uint64_t size) {
  ScratchLayout l;
  l.accumulator = static_cast<std::uint64_t>(members) * s.largest;
  l.incoming = l.accumulator + size;
  l.end = l.incoming + s.largest;
  return l;
}

// The rank's scratch layout, asked of the builder for the current rank.
ScratchLayout claim_scratch(ScheduleBuilder& b, const Slices& s, const NodeGroup& node,
                            std::uint64_t size) {
  const ScratchLayout layout = scratch_layout(s, node.size(), size);
  b.need_scratch(layout.end);
  return layout;
}

// Step 1 at `rank`: the k group gathers, and the combining of the rank's own slice into
// `slice` (when it owns one). Returns the operations after which it holds the node's slice.
std::vector<OpIndex> combine_in_node(ScheduleBuilder& b, const Slices& s, const NodeGroup& node,
                                     int rank, const ScratchLayout& layout, const Range& slice) {
  const int local = node.local_of(rank);
  const int members = node.size();
  if (members == 1) return {b.copy(slice, s.pieces.range(Buffer::Send, 0, s.k))};
  OpIndex own_gather = kNoOp;
  for (int j = 0; j < s.k; ++j) {
    const std::uint64_t length = s.pieces.length(j);
    const Range copies =
        local == j ? Range{Buffer::Scratch, layout.gathered, members * length} : kNothing;
    const OpIndex g = b.group(OpKind::GroupGather, node.members[j], copies,
                              s.pieces.range(Buffer::Send, j, j + 1));
    if (local == j) own_gather = g;
  }
  if (local >= s.k) return {};
  const std::uint64_t length = s.pieces.length(local);
  const auto copy_of = [&](int i) {
    return Range{Buffer::Scratch, layout.gathered + static_cast<std::uint64_t>(i) * length, length};
  };
  OpIndex combined = b.copy(slice, copy_of(0), {own_gather});
  for (int i = 1; i < members; ++i) combined = b.reduce(slice, copy_of(i), {combined});
  return {combined};
}

// Step 3 at `rank`: k group bcasts, slice i from local rank i (its combined slice once `ready`
// completed) into place(i) of every other member.
template <typename Place>
void spread_slices(ScheduleBuilder& b, const Slices& s, const NodeGroup& node, int local,
                   const Place& place, const std::vector<OpIndex>& ready) {
  for (int i = 0; i < s.k; ++i) {
    if (local == i) {
      b.group(OpKind::GroupBcast, node.members[i], kNothing, place(i), ready);
    } else {
      b.group(OpKind::GroupBcast, node.members[i], place(i), kNothing);
    }
  }
}

}  // namespace

namespace {

// Allreduce on nodes that all hold L > 1 ranks: one group alltoall hands local rank j the L
// copies of its slice (every core copies at once, where k gathers would take turns), the ranks
// combine and cross the rails, and one group allgather spreads the slices. The vector's last
// count mod L elements (fewer than L) take the gather path of local rank 0: a group gather, a
// rail, a group bcast.
Schedule allreduce_hier_shm_uniform(const Platform& platform, const BuildParams& params,
                                    const NodeGroups& groups, int members) {
  const std::uint64_t e = params.element_size;
  const std::uint64_t slice = params.size / e / static_cast<std::uint64_t>(members) * e;
  const std::uint64_t main = slice * static_cast<std::uint64_t>(members);
  const std::uint64_t rest = params.size - main;
  const int nodes = static_cast<int>(groups.groups.size());
  ScheduleBuilder b =
      reduction_builder(Collective::Allreduce, "hier-shm", platform.num_ranks(), params);
  // Scratch: the L copies of the slice, the combined slice, a rail partner's slice; then the
  // same for the rest.
  const std::uint64_t copies = 0;
  const std::uint64_t combined = main;
  const std::uint64_t incoming = combined + slice;
  const std::uint64_t rest_copies = incoming + slice;
  const std::uint64_t rest_incoming = rest_copies + rest * members;
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    b.need_scratch(rest_incoming + rest);
    const int g = groups.group_of[r];
    const NodeGroup& node = groups.groups[g];
    const int local = node.local_of(r);
    const auto rail = [&](int j) {
      return [&groups, j](int n) { return groups.groups[n].members[j]; };
    };
    // The main part: one alltoall, the combine, rail `local`, one allgather.
    const Range mine{Buffer::Scratch, combined, slice};
    const OpIndex spread = b.group(OpKind::GroupAlltoall, node.leader,
                                   {Buffer::Scratch, copies, main}, {Buffer::Send, 0, main});
    std::vector<OpIndex> ready{b.copy(mine, {Buffer::Scratch, copies, slice}, {spread})};
    for (int i = 1; i < members; ++i) {
      ready.assign(1, b.reduce(mine, {Buffer::Scratch, copies + i * slice, slice}, ready));
    }
    if (nodes > 1) {
      ready = recursive_doubling_allreduce(b, nodes, g, rail(local), mine,
                                           {Buffer::Scratch, incoming, slice}, ready);
    }
    b.group(OpKind::GroupAllgather, node.leader, {Buffer::Recv, 0, main}, mine, ready);
    // The rest, through local rank 0.
    if (rest == 0) continue;
    const Range rest_in{Buffer::Send, main, rest};
    const Range rest_out{Buffer::Recv, main, rest};
    if (local != 0) {
      b.group(OpKind::GroupGather, node.members[0], kNothing, rest_in);
      b.group(OpKind::GroupBcast, node.members[0], rest_out, kNothing);
      continue;
    }
    const OpIndex gathered = b.group(OpKind::GroupGather, node.members[0],
                                     {Buffer::Scratch, rest_copies, rest * members}, rest_in);
    std::vector<OpIndex> done{b.copy(rest_out, {Buffer::Scratch, rest_copies, rest}, {gathered})};
    for (int i = 1; i < members; ++i) {
      done.assign(1, b.reduce(rest_out, {Buffer::Scratch, rest_copies + i * rest, rest}, done));
    }
    if (nodes > 1) {
      done = recursive_doubling_allreduce(b, nodes, g, rail(0), rest_out,
                                          {Buffer::Scratch, rest_incoming, rest}, done);
    }
    b.group(OpKind::GroupBcast, node.members[0], kNothing, rest_out, done);
  }
  return b.finish();
}

}  // namespace

Schedule allreduce_hier_shm(const Platform& platform, const BuildParams& params) {
  const Slices s = plan_slices(platform, params);
  const int nodes = static_cast<int>(s.nodes.groups.size());
  const bool uniform = std::all_of(s.nodes.groups.begin(), s.nodes.groups.end(),
                                   [&](const NodeGroup& g) { return g.size() == s.k; });
  if (uniform && s.k > 1) return allreduce_hier_shm_uniform(platform, params, s.nodes, s.k);
  ScheduleBuilder b =
      reduction_builder(Collective::Allreduce, "hier-shm", platform.num_ranks(), params);
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    const int g = s.nodes.group_of[r];
    const NodeGroup& node = s.nodes.groups[g];
    const int local = node.local_of(r);
    const ScratchLayout layout = claim_scratch(b, s, node, params.size);
    const Range slice = local < s.k ? s.pieces.range(Buffer::Recv, local, local + 1) : kNothing;
    std::vector<OpIndex> ready = combine_in_node(b, s, node, r, layout, slice);
    if (local < s.k && nodes > 1) {
      ready = recursive_doubling_allreduce(
          b, nodes, g, [&](int n) { return s.rail_rank(n, local); }, slice,
          {Buffer::Scratch, layout.incoming, slice.length}, ready);
    }
    if (node.size() == 1) continue;
    spread_slices(
        b, s, node, local, [&](int i) { return s.pieces.range(Buffer::Recv, i, i + 1); }, ready);
  }
  return b.finish();
}

// The root's node gathers the slices with group bcasts (its other ranks keep them in Scratch);
// every other node's rail members send their slice to the root's node, whose rail member
// combines them one node after the other.
Schedule reduce_hier_shm(const Platform& platform, const BuildParams& params) {
  const Slices s = plan_slices(platform, params);
  const int nodes = static_cast<int>(s.nodes.groups.size());
  const int root = params.root;
  const int home = s.nodes.root_group;
  ScheduleBuilder b =
      reduction_builder(Collective::Reduce, "hier-shm", platform.num_ranks(), params);
  for (int r = 0; r < platform.num_ranks(); ++r) {
    b.start_rank(r);
    const int g = s.nodes.group_of[r];
    const NodeGroup& node = s.nodes.groups[g];
    const int local = node.local_of(r);
    const ScratchLayout layout = claim_scratch(b, s, node, params.size);
    // The root combines in Recv, every other rank in its Scratch accumulator.
    const auto place = [&](int i) {
      return r == root ? s.pieces.range(Buffer::Recv, i, i + 1)
                       : s.pieces.range(Buffer::Scratch, i, i + 1, layout.accumulator);
    };
    const Range slice = local < s.k ? place(local) : kNothing;
    std::vector<OpIndex> ready = combine_in_node(b, s, node, r, layout, slice);
    if (local < s.k && g != home) {
      b.send(s.rail_rank(home, local), slice, kAnyLane, ready);
    } else if (local < s.k) {
      for (int n = 0; n < nodes; ++n) {
        if (n == home) continue;
        ready.assign(1, b.recv_reduce(s.rail_rank(n, local), slice, kAnyLane, ready));
      }
    }
    if (g != home || node.size() == 1) continue;
    spread_slices(b, s, node, local, place, ready);
  }
  return b.finish();
}

}  // namespace multilane::algo
