// Structural properties the broadcast papers claim for their trees, checked on the schedules.
#include <gtest/gtest.h>

#include <map>

#include "multilane/algorithms.hpp"
#include "schedule_queries.hpp"

namespace multilane {
namespace {

using testing::lanes;
using testing::peers;
using testing::sends_of;
using testing::wan_traffic;

Platform one_site(int nodes, int lanes_per_node = 2) {
  return make_uniform_platform(1, nodes, lanes_per_node, 1, 125e6, 50e-6, 0, 0, 0);
}

Schedule bcast(const Platform& p, const char* algorithm, std::uint64_t size, int root = 0,
               std::uint64_t segment = kDefaultSegment) {
  BuildParams params;
  params.root = root;
  params.size = size;
  params.segment = segment;
  return build_schedule(p, Collective::Bcast, algorithm, params);
}

// Who sends bytes of [first, last) to whom.
std::multimap<int, int> edges_carrying(const Schedule& s, std::uint64_t first, std::uint64_t last) {
  std::multimap<int, int> edges;
  for (const auto& t : sends_of(s)) {
    if (t.range.offset >= first && t.range.end() <= last) edges.emplace(t.from, t.to);
  }
  return edges;
}

TEST(MultilaneBcast, MatchesThePapersTreesForFourNMinusOneNodes) {
  // p = 4n-1 = 15, n = 4: Tree_A = ranks 1..7 (A_i = rank i), Tree_B = ranks 8..14 (B_i = 7+i).
  // Leaf A_{n+i} sends M_A to B_{2i+1} and B_{2i+2} (section 3.1, step iii).
  const auto s = bcast(one_site(15), "multilane", 1000, 0, 1000);
  const auto a_edges = edges_carrying(s, 0, 500);
  auto children_of = [&](int rank) {
    std::set<int> out;
    for (auto [it, end] = a_edges.equal_range(rank); it != end; ++it) out.insert(it->second);
    return out;
  };
  EXPECT_EQ(children_of(0), (std::set<int>{1}));
  EXPECT_EQ(children_of(1), (std::set<int>{2, 3}));
  EXPECT_EQ(children_of(3), (std::set<int>{6, 7}));
  EXPECT_EQ(children_of(4), (std::set<int>{8, 9}));    // A_4 -> B_1, B_2
  EXPECT_EQ(children_of(5), (std::set<int>{10, 11}));  // A_5 -> B_3, B_4
  EXPECT_EQ(children_of(7), (std::set<int>{14}));      // A_7 -> B_7, one uplink spare
  const auto b_edges = edges_carrying(s, 500, 1000);
  EXPECT_EQ(b_edges.count(0), 1u);
  EXPECT_EQ(b_edges.find(0)->second, 8);  // root -> B_1
  EXPECT_EQ(b_edges.count(11), 2u);       // B_4 (leaf) feeds two nodes of Tree_A
}

TEST(MultilaneBcast, EveryRankReceivesTheHalvesOnTwoLanesAndSendsOnAtMostTwo) {
  for (int p : {2, 3, 4, 5, 8, 15, 16, 31, 32, 33, 100}) {
    const auto s = bcast(one_site(p), "multilane", 1 << 20, p / 3, 64 << 10);
    for (int r = 0; r < p; ++r) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " rank " << r);
      EXPECT_LE(peers(s, r, OpKind::Send).size(), 2u);
      if (r == p / 3) continue;
      EXPECT_EQ(peers(s, r, OpKind::Recv).size(), p == 2 ? 1u : 2u);
      if (p > 2) {
        EXPECT_EQ(lanes(s, r, OpKind::Recv), (std::set<int>{0, 1}));
      }
    }
  }
}

TEST(MultilaneBcast, BinaryTreeLeavesSendNothingButMultilaneLeavesSendTwice) {
  // The paper's argument (section 2.2): in a binary tree half the nodes never send.
  const auto platform = one_site(31);
  const auto binary = bcast(platform, "binary", 1 << 20);
  const auto multi = bcast(platform, "multilane", 1 << 20);
  int binary_silent = 0;
  int multi_silent = 0;
  for (int r = 0; r < 31; ++r) {
    binary_silent += peers(binary, r, OpKind::Send).empty();
    multi_silent += peers(multi, r, OpKind::Send).empty();
  }
  EXPECT_EQ(binary_silent, 16);  // the leaves of a 31-node heap
  EXPECT_EQ(multi_silent, 0);
}

TEST(MultilaneSitesBcast, CrossesEachWanLinkWithTheMessageOnceInTwoStreams) {
  const auto platform = make_uniform_platform(3, 6, 2, 1, 125e6, 50e-6, 10e-3, 10e9, 0);
  const std::uint64_t size = 999;
  const auto s = bcast(platform, "multilane-sites", size, 4, 100);
  const auto [bytes, pairs] = wan_traffic(s, platform);
  EXPECT_EQ(bytes, 2 * size);   // two site boundaries, M over each
  EXPECT_EQ(pairs.size(), 4u);  // two streams (M_A and M_B) per boundary
  const auto plain = bcast(platform, "multilane", size, 4, 100);
  EXPECT_GT(wan_traffic(plain, platform).first, 2 * size);  // site-oblivious trees cross more
}

TEST(BinaryBcast, OnSeveralSitesTheRootFirstFeedsEachRemoteRepresentative) {
  const auto platform = make_uniform_platform(2, 16, 2, 1, 125e6, 50e-6, 10e-3, 10e9, 0);
  const auto s = bcast(platform, "binary", 4096, 0, 1024);
  const auto root_program = s.program(0);
  ASSERT_FALSE(root_program.empty());
  EXPECT_EQ(root_program.front().peer, 16);
  EXPECT_EQ(root_program.front().lane, kAnyLane);  // striped over both NICs, as the paper's M/b
  const auto [bytes, pairs] = wan_traffic(s, platform);
  EXPECT_EQ(bytes, 4096u);
  EXPECT_EQ(pairs.size(), 1u);
}

TEST(DoubleBinaryTree, EveryRankIsInnerInAtMostOneTree) {
  for (int p : {2, 3, 4, 7, 8, 9, 16, 17, 64, 65}) {
    const auto s = bcast(one_site(p), "dbtree", 1000, 0, 100);
    for (int r = 1; r < p; ++r) {
      SCOPED_TRACE(::testing::Message() << "p=" << p << " rank " << r);
      std::set<bool> halves_sent;
      for (const Op& op : s.program(r)) {
        if (op.kind == OpKind::Send) halves_sent.insert(op.range.offset >= 500);
      }
      EXPECT_LE(halves_sent.size(), 1u);
      EXPECT_LE(peers(s, r, OpKind::Send).size(), 2u);
    }
  }
}

TEST(ChainBcast, StripesOverBothLanesAndVisitsSitesInOrder) {
  const auto platform = make_uniform_platform(2, 4, 2, 1, 125e6, 50e-6, 10e-3, 10e9, 0);
  const auto s = bcast(platform, "chain", 1000, 5, 100);
  for (const auto& t : sends_of(s)) EXPECT_EQ(t.lane, kAnyLane);
  EXPECT_EQ(wan_traffic(s, platform).first, 1000u);  // 5,6,7,4 then 0,1,2,3: one crossing
}

TEST(BinomialBcast, RootServesLargestSubtreeFirstOneAtATime) {
  const auto s = bcast(one_site(8), "binomial", 100);
  const auto prog = s.program(0);
  ASSERT_EQ(prog.size(), 3u);
  EXPECT_EQ(prog[0].peer, 4);
  EXPECT_EQ(prog[1].peer, 2);
  EXPECT_EQ(prog[2].peer, 1);
  EXPECT_EQ(s.deps_of(prog[2]).size(), 1u);  // waits for the previous send
}

TEST(Bcast, EmptyMessageNeedsNoOperation) {
  for (const auto& a : all_algorithms()) {
    if (a.collective != Collective::Bcast) continue;
    EXPECT_EQ(bcast(one_site(9), std::string(a.name).c_str(), 0).num_ops(), 0u) << a.name;
  }
}

}  // namespace
}  // namespace multilane
