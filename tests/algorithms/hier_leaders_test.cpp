// The two-level `hier-shm:X` collectives as data: X really runs between the node leaders (their
// transfers are X's, a node's blocks as one block), the fallback when nodes hold different
// numbers of ranks, the user's buffers used in place when ranks are numbered node after node,
// every shape, placement and root verified, the errors for bad names, and the closed forms.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"
#include "multilane/model.hpp"
#include "multilane/verify.hpp"
#include "schedule_queries.hpp"

namespace multilane {
namespace {

using testing::sends_of;

enum class Placement { Block, RoundRobin, ReversedBlocks };

std::string to_string(Placement p) {
  switch (p) {
    case Placement::Block:
      return "block";
    case Placement::RoundRobin:
      return "round-robin";
    case Placement::ReversedBlocks:
      return "reversed-blocks";
  }
  return "";
}

// Nodes of the given core counts on one site, every core a rank: block-wise (node after node),
// dealt one at a time over the nodes, or block-wise from the last node back (each node's ranks
// consecutive, but not in node order).
Platform smp_platform(const std::vector<int>& cores, Placement placement) {
  Platform p;
  p.name = to_string(placement);
  const int site = p.add_site("site", 20e-6);
  for (std::size_t n = 0; n < cores.size(); ++n) {
    p.add_node(site, "n" + std::to_string(n), cores[n], 1, 125e6);
  }
  std::vector<int> used(cores.size(), 0);
  const int total = p.total_cores();
  const int nodes = static_cast<int>(cores.size());
  while (static_cast<int>(p.ranks.size()) < total) {
    for (int k = 0; k < nodes; ++k) {
      const int n = placement == Placement::ReversedBlocks ? nodes - 1 - k : k;
      const int take = placement == Placement::RoundRobin ? 1 : cores[n];
      for (int i = 0; i < take && used[n] < cores[n]; ++i) p.ranks.push_back({n, used[n]++});
    }
  }
  return p;
}

constexpr Placement kPlacements[] = {Placement::Block, Placement::RoundRobin,
                                     Placement::ReversedBlocks};

Schedule build(const Platform& p, Collective c, std::string_view algorithm, int root,
               std::uint64_t size, std::uint64_t segment = kDefaultSegment) {
  return build_schedule(p, c, algorithm, {.root = root, .size = size, .segment = segment});
}

// The leaders as the SMP paper picks them: the root on its node, else the node's lowest rank;
// in node order. Computed here independently of the builders.
struct Leaders {
  std::vector<int> ranks;  // per node with ranks, in node order
  Platform platform;       // the leaders alone
  int root = 0;            // the root's node's position
  int per_node = 0;        // ranks on every node, 0 when nodes differ
};

Leaders leaders_of(const Platform& p, int root) {
  std::map<int, std::vector<int>> by_node;
  for (int r = 0; r < p.num_ranks(); ++r) by_node[p.node_of(r)].push_back(r);
  Leaders l;
  l.platform = p;
  l.platform.ranks.clear();
  const int first_size = static_cast<int>(by_node.begin()->second.size());
  l.per_node = first_size;
  for (const auto& [node, members] : by_node) {
    const bool root_node = node == p.node_of(root);
    if (root_node) l.root = static_cast<int>(l.ranks.size());
    const int leader = root_node ? root : members.front();
    l.ranks.push_back(leader);
    l.platform.ranks.push_back(p.ranks[leader]);
    if (static_cast<int>(members.size()) != first_size) l.per_node = 0;
  }
  return l;
}

using Wire = std::multiset<std::tuple<int, int, std::uint64_t, int>>;  // from, to, bytes, lane

Wire wire_of(const Schedule& s, const std::vector<int>& ranks = {}) {
  Wire w;
  for (const auto& t : sends_of(s)) {
    const int from = ranks.empty() ? t.from : ranks[t.from];
    const int to = ranks.empty() ? t.to : ranks[t.to];
    w.insert({from, to, t.range.length, t.lane});
  }
  return w;
}

int copies_on(const Schedule& s, int rank) {
  return static_cast<int>(std::count_if(s.program(rank).begin(), s.program(rank).end(),
                                        [](const Op& op) { return op.kind == OpKind::Copy; }));
}

const std::vector<std::vector<int>> kShapes = {{1},          {4},       {3, 3},    {2, 2, 2},
                                               {1, 1, 1, 1}, {1, 4, 2}, {2, 1, 3}, {3, 2, 3, 3}};

TEST(HierLeaders, EveryVariantVerifiesOnEveryShapePlacementAndRoot) {
  int verified = 0;
  for (const Placement placement : kPlacements) {
    for (const auto& shape : kShapes) {
      const Platform platform = smp_platform(shape, placement);
      for (const AlgorithmInfo& a : leaders_variants()) {
        for (int root = 0; root < platform.num_ranks(); ++root) {
          for (const std::uint64_t size : {0ull, 1001ull}) {
            const Schedule s = build(platform, a.collective, a.name, root, size, 333);
            const VerifyReport report = verify_schedule(s, platform, {.max_errors = 1});
            ASSERT_TRUE(report.ok())
                << to_string(placement) << " " << ::testing::PrintToString(shape) << " "
                << multilane::to_string(a.collective) << " " << a.name << " root " << root
                << " size " << size << ": " << report.errors.front();
            ++verified;
          }
        }
      }
    }
  }
  EXPECT_GT(verified, 3000);
}

// With equal nodes the network carries exactly X's transfers among the leaders (a node's L
// blocks as one block); with unequal nodes exactly plain hier-shm's.
TEST(HierLeaders, LeadersRunXWhenNodesAreEqualAndThePlainExchangeElse) {
  for (const Placement placement : kPlacements) {
    for (const auto& shape : kShapes) {
      const Platform platform = smp_platform(shape, placement);
      const int p = platform.num_ranks();
      for (const AlgorithmInfo& a : leaders_variants()) {
        for (const int root : {0, p - 1}) {
          const std::uint64_t s = 1001;
          const Schedule two_level = build(platform, a.collective, a.name, root, s, 333);
          EXPECT_EQ(two_level.algorithm, a.name);
          const Leaders leaders = leaders_of(platform, root);
          const std::string context = fmt::format("{} {} {} {} root {}", to_string(placement),
                                                  ::testing::PrintToString(shape),
                                                  multilane::to_string(a.collective), a.name, root);
          const bool bcast = a.collective == Collective::Bcast;
          if (bcast || leaders.per_node > 0) {
            const std::uint64_t block = bcast ? s : leaders.per_node * s;
            const Schedule x = build(leaders.platform, a.collective, a.leaders_algorithm,
                                     leaders.root, block, 333);
            EXPECT_EQ(wire_of(two_level), wire_of(x, leaders.ranks)) << context;
          } else {
            EXPECT_EQ(wire_of(two_level),
                      wire_of(build(platform, a.collective, "hier-shm", root, s)))
                << context;
          }
        }
      }
    }
  }
}

// Ranks numbered node after node: the root's blocks go out of Send and the allgather's result
// lands in Recv as they are (no copy at all); otherwise they are packed and unpacked.
TEST(HierLeaders, UsesTheUserBuffersInPlaceWhenRanksAreNodeMajor) {
  const Platform block = smp_platform({3, 3, 3}, Placement::Block);
  const Platform dealt = smp_platform({3, 3, 3}, Placement::RoundRobin);
  for (const char* x : {"linear", "binomial"}) {
    const std::string name = std::string("hier-shm:") + x;
    for (const Collective c : {Collective::Scatter, Collective::Gather}) {
      EXPECT_EQ(copies_on(build(block, c, name, 0, 100), 0), 0) << name;
      EXPECT_EQ(copies_on(build(dealt, c, name, 0, 100), 0), 9) << name;  // every block
    }
  }
  for (const char* x : {"ring", "recursive-doubling"}) {
    const std::string name = std::string("hier-shm:") + x;
    const Schedule in_place = build(block, Collective::Allgather, name, 0, 100);
    for (int r = 0; r < 9; ++r) EXPECT_EQ(copies_on(in_place, r), 0) << name << " rank " << r;
    // Dealt ranks: the nine blocks, none consecutive, unpacked one by one (the node's own
    // blocks are gathered into their place among X's result: X copies nothing).
    const Schedule unpacked = build(dealt, Collective::Allgather, name, 0, 100);
    for (int leader : {0, 1, 2}) EXPECT_EQ(copies_on(unpacked, leader), 9) << name;
  }
}

TEST(HierLeaders, NamesFlowThroughTheRegistry) {
  const AlgorithmInfo* info = find_algorithm(Collective::Bcast, "hier-shm:multilane");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->name, "hier-shm:multilane");
  EXPECT_EQ(info->leaders_algorithm, "multilane");
  EXPECT_TRUE(info->pipelined);  // X's: the segment reaches the leaders' trees
  EXPECT_TRUE(info->two_level);
  EXPECT_FALSE(info->takes_leaders_algorithm);
  EXPECT_TRUE(find_algorithm(Collective::Scatter, "hier-shm:multilane")->uses_wan_pairs());
  EXPECT_EQ(find_algorithm(Collective::Bcast, "hier-shm:hier-shm"), nullptr);
  EXPECT_EQ(find_algorithm(Collective::Alltoall, "hier-shm:pairwise"), nullptr);
  // 9 bcast, 4 scatter, 4 gather and 3 allgather leaders' algorithms; none listed as plain.
  EXPECT_EQ(leaders_variants().size(), 20u);
  for (const AlgorithmInfo& a : all_algorithms()) {
    EXPECT_EQ(a.name.find(':'), std::string_view::npos) << a.name;
  }
  for (const AlgorithmInfo& a : leaders_variants()) {
    EXPECT_FALSE(find_algorithm(a.collective, a.leaders_algorithm)->two_level) << a.name;
  }
  EXPECT_EQ(leaders_algorithm_names(Collective::Allgather),
            "ring, recursive-doubling, multilane-sites");
}

TEST(HierLeaders, PlainNamesKeepThePapersChoiceAndShareTheCode) {
  const Platform platform = smp_platform({3, 2, 3}, Placement::RoundRobin);
  auto same_ops = [](const Schedule& a, const Schedule& b) {
    return schedule_to_text(a).substr(schedule_to_text(a).find('\n')) ==
           schedule_to_text(b).substr(schedule_to_text(b).find('\n'));
  };
  EXPECT_TRUE(same_ops(build(platform, Collective::Bcast, "hier-shm", 4, 999),
                       build(platform, Collective::Bcast, "hier-shm:binomial", 4, 999)));
  EXPECT_TRUE(same_ops(build(platform, Collective::Bcast, "hier-shm-vdg", 4, 999),
                       build(platform, Collective::Bcast, "hier-shm:vandegeijn", 4, 999)));
  // The name decides the leaders' algorithm, not a field set by the caller.
  BuildParams params{.root = 4, .size = 999};
  params.leaders_algorithm = "linear";
  EXPECT_TRUE(same_ops(build_schedule(platform, Collective::Scatter, "hier-shm", params),
                       build(platform, Collective::Scatter, "hier-shm", 4, 999)));
  EXPECT_EQ(build_schedule(platform, Collective::Scatter, "hier-shm", params).algorithm,
            "hier-shm");
}

TEST(HierLeaders, PassesTheSegmentAndWanPairsToTheLeaders) {
  const Platform one_site = smp_platform({2, 2, 2, 2, 2}, Placement::Block);
  const Schedule s = build(one_site, Collective::Bcast, "hier-shm:multilane", 0, 1000, 100);
  EXPECT_EQ(s.segment, 100u);
  for (const auto& t : sends_of(s)) EXPECT_LE(t.range.length, 100u);

  Platform two_sites = make_uniform_platform(2, 4, 2, 2, 125e6, 50e-6, 5e-3, 125e6, 31.25e6);
  two_sites.place_block(16);
  BuildParams params{.root = 0, .size = 1000, .wan_pairs = 3};
  const Schedule scatter =
      build_schedule(two_sites, Collective::Scatter, "hier-shm:multilane", params);
  EXPECT_EQ(wan_pairs_used(two_sites, Collective::Scatter, "hier-shm:multilane", params), 3);
  EXPECT_EQ(testing::wan_traffic(scatter, two_sites).second.size(), 3u);
  EXPECT_TRUE(verify_schedule(scatter, two_sites).ok());
}

std::string usage_error(const std::function<void()>& call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HierLeaders, BadNamesSayWhatIsWrongAndWhatIsAllowed) {
  const Platform platform = smp_platform({3, 3}, Placement::Block);
  auto build_error = [&](Collective c, const char* name) {
    return usage_error([&] { build(platform, c, name, 0, 10); });
  };
  EXPECT_EQ(build_error(Collective::Bcast, "hier-shm:nope"),
            "unknown bcast algorithm \"hier-shm:nope\": the leaders' algorithm of hier-shm must "
            "be one of linear, chain, binary, binomial, vandegeijn, multilane, multilane-sites, "
            "dbtree, site-binomial");
  EXPECT_EQ(build_error(Collective::Scatter, "hier-shm:hier-shm"),
            "unknown scatter algorithm \"hier-shm:hier-shm\": hier-shm is two-level itself; the "
            "leaders' algorithm of hier-shm must be one of linear, binomial, single-lane, "
            "multilane");
  EXPECT_EQ(build_error(Collective::Bcast, "hier-shm:hier-shm-vdg"),
            "unknown bcast algorithm \"hier-shm:hier-shm-vdg\": hier-shm-vdg is two-level "
            "itself; the leaders' algorithm of hier-shm must be one of linear, chain, binary, "
            "binomial, vandegeijn, multilane, multilane-sites, dbtree, site-binomial");
  EXPECT_EQ(build_error(Collective::Bcast, "binomial:ring"),
            "unknown bcast algorithm \"binomial:ring\": binomial takes no leaders' algorithm "
            "(only hier-shm does)");
  EXPECT_EQ(build_error(Collective::Alltoall, "hier-shm:pairwise"),
            "unknown alltoall algorithm \"hier-shm:pairwise\": hier-shm takes no leaders' "
            "algorithm (no alltoall algorithm does)");
  EXPECT_EQ(build_error(Collective::Allgather, "ring:ring:ring"),
            "unknown allgather algorithm \"ring:ring:ring\": ring takes no leaders' algorithm "
            "(only hier-shm does)");
  // An unknown base: the usual list.
  EXPECT_EQ(build_error(Collective::Gather, "nope:linear"),
            "unknown gather algorithm \"nope:linear\": choose one of linear, binomial, "
            "single-lane, multilane, hier-shm");
  // The model says the same.
  EXPECT_EQ(usage_error([&] {
              model_time(platform, Collective::Bcast, "hier-shm:nope", {.root = 0, .size = 10});
            }),
            build_error(Collective::Bcast, "hier-shm:nope"));
}

// hier-shm:X's closed form is X's own on the leaders' platform plus the same intra-node part
// for every X; unequal nodes price the fallback; X without a form there leaves none.
TEST(HierLeaders, ClosedFormIsTheLeadersFormPlusTheNodes) {
  const Platform equal = smp_platform({4, 4, 4, 4, 4}, Placement::Block);
  const Leaders leaders = leaders_of(equal, 0);
  const std::uint64_t s = 4096;
  for (const Collective c : {Collective::Scatter, Collective::Gather, Collective::Allgather}) {
    std::vector<double> intra;
    for (const AlgorithmInfo& a : leaders_variants()) {
      if (a.collective != c) continue;
      const double two_level = model_time(equal, c, a.name, {.root = 0, .size = s});
      const double x = model_time(leaders.platform, c, a.leaders_algorithm,
                                  {.root = leaders.root, .size = 4 * s});
      EXPECT_GT(x, 0) << a.name;
      intra.push_back(two_level - x);
    }
    ASSERT_GE(intra.size(), 2u);
    for (double part : intra) EXPECT_NEAR(part, intra.front(), 1e-12) << multilane::to_string(c);
    EXPECT_GT(intra.front(), 0);
  }
  EXPECT_EQ(model_time(equal, Collective::Bcast, "hier-shm:binomial", {.root = 0, .size = s}),
            model_time(equal, Collective::Bcast, "hier-shm", {.root = 0, .size = s}));
  const Platform unequal = smp_platform({4, 2, 4}, Placement::Block);
  EXPECT_EQ(model_time(unequal, Collective::Scatter, "hier-shm:binomial", {.root = 0, .size = s}),
            model_time(unequal, Collective::Scatter, "hier-shm", {.root = 0, .size = s}));

  Platform two_sites = make_uniform_platform(2, 2, 1, 2, 125e6, 50e-6, 5e-3, 125e6, 0);
  two_sites.place_block(8);
  EXPECT_EQ(usage_error([&] {
              model_time(two_sites, Collective::Bcast, "hier-shm:binomial", {.root = 0, .size = s});
            }),
            "bcast hier-shm:binomial: between the node leaders: bcast binomial has no closed form "
            "on several sites (it ignores them, so its WAN traffic depends on rank numbering); "
            "simulate it instead");
  EXPECT_FALSE(has_closed_form(two_sites, Collective::Bcast, "hier-shm:binomial"));
  EXPECT_TRUE(has_closed_form(two_sites, Collective::Bcast, "hier-shm:site-binomial"));
}

}  // namespace
}  // namespace multilane
