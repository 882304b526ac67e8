// The algorithms marked own_counts_only (algorithms.hpp): a rank's part of the schedule built
// from the counts that rank knows from its own arguments (its row and column of an alltoallv,
// its own block of a gatherv or scatterv, every block at the root; the rest 0) is its part
// built from every rank's counts: the same operations, dependencies and scratch. So the MPI
// library runs them without exchanging counts. Every p from 1 to 40 and 64, 100, 130; counts
// with zeros, one large block and every rank different; every root up to 40 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {
namespace {

Platform sites_for(int ranks) {
  const int nodes = (ranks + 3) / 4;  // per site, two cores each
  Platform p = make_uniform_platform(2, std::max(1, nodes), 2, 2, 125e6, 50e-6, 10e-3, 1.25e9, 0);
  p.place_block(ranks);
  return p;
}

// Counts with zeros, one block 64 times the others, every one different.
std::vector<std::uint64_t> uneven_counts(std::size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<std::uint64_t> counts(n);
  for (std::uint64_t& c : counts) c = random() % 4 == 0 ? 0 : 1 + random() % 997;
  if (n > 1) counts[random() % n] = 64 * 1000;
  return counts;
}

// What `rank` knows of `counts` from its own arguments, the rest 0.
std::vector<std::uint64_t> known_at(Collective c, int rank, int root, int p,
                                    const std::vector<std::uint64_t>& counts) {
  if (c == Collective::Alltoallv) {
    std::vector<std::uint64_t> known(counts.size(), 0);
    for (int j = 0; j < p; ++j) {
      known[rank * p + j] = counts[rank * p + j];  // what it sends
      known[j * p + rank] = counts[j * p + rank];  // what it receives
    }
    return known;
  }
  if (rank == root) return counts;
  std::vector<std::uint64_t> known(counts.size(), 0);
  known[rank] = counts[rank];
  return known;
}

struct Part {
  std::vector<Op> ops;
  std::vector<std::vector<OpIndex>> deps;
  std::uint64_t scratch = 0;
};

Part part_of(const Schedule& s, int rank) {
  Part part;
  part.scratch = s.scratch_bytes.empty() ? 0 : s.scratch_bytes.at(rank);
  for (const Op& op : s.program(rank)) {
    part.ops.push_back(op);
    part.ops.back().deps_begin = 0;  // indices into the schedule's list differ; the lists not
    part.deps.emplace_back(s.deps.begin() + op.deps_begin,
                           s.deps.begin() + op.deps_begin + op.deps_count);
  }
  return part;
}

bool same(const Op& a, const Op& b) {
  return a.kind == b.kind && a.lane == b.lane && a.peer == b.peer && a.range == b.range &&
         a.source == b.source && a.deps_count == b.deps_count;
}

std::uint64_t largest(const std::vector<std::uint64_t>& counts) {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

void expect_same_parts(Collective c, const AlgorithmInfo& a, int p, int root, unsigned seed) {
  const Platform platform = sites_for(p);
  const std::size_t n = c == Collective::Alltoallv ? static_cast<std::size_t>(p) * p : p;
  const auto counts = uneven_counts(n, seed);
  const Schedule whole = build_schedule(platform, c, a.name,
                                        {.root = root, .size = largest(counts), .counts = counts});
  for (int rank = 0; rank < p; ++rank) {
    const auto known = known_at(c, rank, root, p, counts);
    const Schedule own = build_schedule(platform, c, a.name,
                                        {.root = root, .size = largest(known), .counts = known});
    const Part expected = part_of(whole, rank), got = part_of(own, rank);
    const std::string where = std::string(to_string(c)) + "/" + std::string(a.name) +
                              " p=" + std::to_string(p) + " root=" + std::to_string(root) +
                              " rank=" + std::to_string(rank);
    ASSERT_EQ(got.ops.size(), expected.ops.size()) << where;
    for (std::size_t i = 0; i < got.ops.size(); ++i) {
      ASSERT_TRUE(same(got.ops[i], expected.ops[i])) << where << " op " << i;
      ASSERT_EQ(got.deps[i], expected.deps[i]) << where << " op " << i;
    }
    ASSERT_EQ(got.scratch, expected.scratch) << where;
  }
}

std::vector<int> rank_counts() {
  std::vector<int> ps;
  for (int p = 1; p <= 40; ++p) ps.push_back(p);
  for (int p : {64, 100, 130}) ps.push_back(p);
  return ps;
}

TEST(OwnCounts, TheMarkedAlgorithmsAreTheOnesExpected) {
  std::vector<std::string> marked;
  for (const AlgorithmInfo& a : all_algorithms()) {
    if (a.own_counts_only)
      marked.push_back(std::string(to_string(a.collective)) + "/" + std::string(a.name));
    EXPECT_TRUE(!a.own_counts_only || a.uneven) << a.name;
  }
  std::sort(marked.begin(), marked.end());
  const std::vector<std::string> expected = {
      "alltoall/linear", "alltoall/pairwise", "alltoallv/linear", "alltoallv/pairwise",
      "gather/linear",   "gatherv/linear",    "scatter/linear",   "scatterv/linear"};
  EXPECT_EQ(marked, expected);
}

TEST(OwnCounts, EveryRanksPartNeedsOnlyTheCountsItKnows) {
  for (const Collective c : {Collective::Gatherv, Collective::Scatterv, Collective::Alltoallv}) {
    for (const AlgorithmInfo& a : all_algorithms()) {
      if (a.collective != c || !a.own_counts_only) continue;
      for (const int p : rank_counts()) {
        if (c == Collective::Alltoallv) {
          expect_same_parts(c, a, p, 0, static_cast<unsigned>(p));
          continue;
        }
        for (int root = 0; root < p; root += p <= 40 ? 1 : 37) {
          expect_same_parts(c, a, p, root, static_cast<unsigned>(p * 131 + root));
        }
      }
    }
  }
}

// The control: a tree's inner ranks forward other ranks' blocks, so their parts need those counts.
TEST(OwnCounts, ABinomialGathervNeedsOtherRanksCounts) {
  const int p = 8;
  const Platform platform = sites_for(p);
  const auto counts = uneven_counts(p, 5);
  const AlgorithmInfo* binomial = find_algorithm(Collective::Gatherv, "binomial");
  ASSERT_NE(binomial, nullptr);
  EXPECT_FALSE(binomial->own_counts_only);
  const Schedule whole = build_schedule(platform, Collective::Gatherv, "binomial",
                                        {.root = 0, .size = largest(counts), .counts = counts});
  const auto known = known_at(Collective::Gatherv, 4, 0, p, counts);
  const Schedule own = build_schedule(platform, Collective::Gatherv, "binomial",
                                      {.root = 0, .size = largest(known), .counts = known});
  const Part expected = part_of(whole, 4), got = part_of(own, 4);  // rank 4 forwards 5, 6, 7
  bool differs = got.ops.size() != expected.ops.size();
  for (std::size_t i = 0; !differs && i < got.ops.size(); ++i) {
    differs = !same(got.ops[i], expected.ops[i]);
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace multilane
