// The acceptance sweep: every algorithm verifies for every p from 1 to 130, on one-site,
// uneven multi-site, one-node-site, multi-core and round-robin-placed platforms, for many
// roots, sizes and segments. One test per (collective, algorithm), so CTest runs them in
// parallel and a failure names the algorithm; each failure message names the whole case.
// Every two-level `hier-shm:X` name is an algorithm of its own here: the platforms give it
// nodes of equal rank counts (X between the leaders; ranks node after node on all but the
// round-robin platform) and of unequal ones (the fallback), every p and root, sizes 0 and odd
// (a pipelined X's small segments only up to p = 17, see for_each_case()).
//
// Reductions run every element size (1, 2, 4, 8 and 16 bytes) in turn over the cases; the
// v-forms every pattern of uneven counts (ramp, zeros, one-huge: count_patterns.hpp), the
// plan's size being the largest block.
//
// Coverage and its budget (the whole sweep must stay within a few minutes under ASan on two
// cores; see size_plans()):
//  - p up to 17 and every 8th p run on all four platforms, the other p on one platform each,
//    in turn (so every p is covered, and every platform sees p of every residue);
//  - sizes 0, 1, 7 and 1000, with segments cutting them into at most 7 pieces, run for every
//    p and, up to p = 17, every root (else roots 0, p/2 and p-1);
//  - allgather and alltoall ignore the root and run with root 0; as their schedules grow as
//    p² whatever the size, sizes 1 and 1000 run on every 4th p above 17 (0 and 7 on all);
//  - finer pipelining (size 1000 in 7-byte segments) and the large size (1048577 = 1 MiB + 1,
//    odd, in 64 KiB and 4096-byte segments) run for small p with every root, then on a
//    stride of p with roots 0 and p-1.
// Under AddressSanitizer (`make test`'s second run) the sweep is a sample: every root and every
// platform up to p = 8, then p up to 17 and every 32nd p (and 130) on one platform each in
// turn. The sanitizers look for memory errors and undefined behaviour on the builders' and the
// verifier's code paths, which those shapes reach; the plain run proves every shape. The whole
// sweep costs 15x more under the sanitizers (ASan's allocator and page faults: the verifier
// allocates per case) and would be most of the sanitized suite's time.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/count_patterns.hpp"
#include "multilane/platform.hpp"
#include "multilane/verify.hpp"

namespace multilane {
namespace {

constexpr int kMaxRanks = 130;
#ifdef __SANITIZE_ADDRESS__
constexpr bool kSanitized = true;  // a sample of the sweep, see the top
#else
constexpr bool kSanitized = false;
#endif
constexpr int kAllRootsUpTo = kSanitized ? 8 : 17;
// Under the sanitizers, p above kSampledUpTo only on kSampledStride (and kMaxRanks).
constexpr int kSampledUpTo = 17;
constexpr int kSampledStride = 32;
constexpr std::uint64_t kLarge = 1048577;
constexpr int kLargeStride = 8;
constexpr int kMaxReportedFailures = 5;

// ---- platforms with at least kMaxRanks cores; ranks are placed on a prefix ----

// Sites of the given node counts; lanes and cores of node i cycle through the given lists.
Platform custom_platform(std::string name, const std::vector<int>& nodes_per_site,
                         const std::vector<int>& lanes_cycle, const std::vector<int>& cores_cycle) {
  Platform p;
  p.name = std::move(name);
  p.source = "generated";
  std::size_t node_index = 0;
  for (std::size_t s = 0; s < nodes_per_site.size(); ++s) {
    const int site = p.add_site(fmt::format("site{}", s), 50e-6);
    for (int n = 0; n < nodes_per_site[s]; ++n, ++node_index) {
      p.add_node(site, fmt::format("site{}-n{}", s, n),
                 cores_cycle[node_index % cores_cycle.size()],
                 lanes_cycle[node_index % lanes_cycle.size()], 125e6);
    }
  }
  WanLink wan;
  wan.latency_s = 10e-3;
  wan.aggregate_bps = 1.25e9;
  p.connect_all_sites(wan);
  return p;
}

struct SweepPlatform {
  std::string name;
  Platform platform;         // placement is redone for every p
  bool round_robin = false;  // ranks dealt over the nodes one at a time, else block-wise
};

// Places `count` ranks: block-wise (node after node), or dealt over the nodes one at a time
// (so the ranks of a node are not consecutive), skipping full nodes.
void place(Platform& platform, int count, bool round_robin) {
  if (!round_robin) {
    platform.place_block(count);
    return;
  }
  platform.ranks.clear();
  std::vector<int> used(platform.nodes.size(), 0);
  while (static_cast<int>(platform.ranks.size()) < count) {
    for (std::size_t n = 0; n < platform.nodes.size() && int(platform.ranks.size()) < count; ++n) {
      if (used[n] < platform.nodes[n].cores) {
        platform.ranks.push_back({static_cast<int>(n), used[n]++});
      }
    }
  }
}

const std::vector<SweepPlatform>& sweep_platforms() {
  static const std::vector<SweepPlatform> platforms = [] {
    std::vector<SweepPlatform> v;
    v.push_back({"one-site", make_uniform_platform(1, kMaxRanks, 2, 1, 125e6, 50e-6, 0, 0, 0)});
    // Uneven sites (1, 2, 5, 1 and 60 nodes), nodes with 1, 2 or 3 lanes and 1-3 cores.
    v.push_back({"uneven-sites",
                 custom_platform("uneven-sites", {1, 2, 5, 1, 60}, {2, 1, 3}, {1, 2, 3, 2})});
    // Every node a site of its own, multi-core, one lane.
    v.push_back({"one-node-sites",
                 custom_platform("one-node-sites", std::vector<int>(kMaxRanks / 2, 1), {1}, {2})});
    // Three sites of multi-core nodes with 3 lanes.
    v.push_back({"smp-sites", make_uniform_platform(3, 11, 3, 4, 125e6, 50e-6, 10e-3, 1.25e9, 0)});
    // Two sites of 2 and 1 nodes of 44 cores, ranks dealt round robin: the ranks of a node and
    // of a site are not consecutive; the nodes hold equal rank counts when 3 divides p.
    v.push_back({"round-robin", custom_platform("round-robin", {2, 1}, {2}, {44}), true});
    return v;
  }();
  return platforms;
}

// ---- which cases ----

bool on_stride(int p, int stride) {
  return p % stride == 0 || p == kMaxRanks;
}

std::vector<int> roots_for(int p) {
  std::vector<int> roots;
  if (p <= kAllRootsUpTo) {
    for (int r = 0; r < p; ++r) roots.push_back(r);
  } else {
    roots = {0, p / 2, p - 1};
  }
  return roots;
}

// One group of cases: a size, the segments tried with it (pipelined algorithms only), and
// which p and roots get them.
struct SizePlan {
  std::uint64_t size;
  std::vector<std::uint64_t> segments;
  int full_up_to;                // every p up to here gets every root of roots_for()
  int stride;                    // above it, p on this stride (and kMaxRanks) get the stride roots
  bool stride_last_root = true;  // stride roots: 0 and p-1 (true) or 0 only
  // Allgather and alltoall schedules grow as p², whatever the size: those sizes whose
  // schedules are the same as another size's but for offsets get this stride above
  // kAllRootsUpTo.
  int quadratic_stride = 1;
};

// Small segments only with small sizes, so no schedule exceeds a few hundred segments; odd
// segments (3, 7, 333) leave a short last segment.
const std::vector<SizePlan>& size_plans() {
  static const std::vector<SizePlan> plans = {
      {0, {kDefaultSegment}, kMaxRanks, 1},
      {1, {kDefaultSegment}, kMaxRanks, 1, true, 4},
      {7, {1, 3, kDefaultSegment}, kMaxRanks, 1},
      {1000, {kDefaultSegment, 333}, kMaxRanks, 1, true, 4},
      {1000, {7}, 9, 32},
      {kLarge, {kDefaultSegment}, kAllRootsUpTo, kLargeStride},
      {kLarge, {4096}, 3, 64, false},
  };
  return plans;
}

std::vector<int> plan_roots(const SizePlan& plan, Collective c, int p);

// Small p and a stride of p run on every platform; every other p on one of them in turn.
bool on_every_platform(int p) {
  return p <= kAllRootsUpTo || (!kSanitized && on_stride(p, kLargeStride));
}

bool in_sweep(int p) {
  return !kSanitized || p <= kSampledUpTo || on_stride(p, kSampledStride);
}

// Reductions see every element size in turn: a plan's size becomes a whole number of elements
// (rounded up, so 7 bytes of 16-byte elements is one element and 1 MiB + 1 stays odd).
constexpr std::uint32_t kElementSizes[] = {1, 2, 4, 8, 16};

CountsPattern counts_pattern(int p, int root, std::uint64_t size) {
  return kAllCountsPatterns[(p + root + size) % std::size(kAllCountsPatterns)];
}

BuildParams case_params(Collective c, int p, int root, std::uint64_t size, std::uint64_t segment) {
  BuildParams params{.root = root, .size = size, .segment = segment};
  if (is_reduction(c)) {
    const std::uint32_t e = kElementSizes[(p + root + size) % std::size(kElementSizes)];
    params.element_size = e;
    params.size = (size + e - 1) / e * e;
  }
  if (is_uneven(c)) {
    params.counts =
        pattern_counts(counts_pattern(p, root, size), c, p, params.size, params.element_size);
  }
  return params;
}

std::vector<int> plan_roots(const SizePlan& plan, Collective c, int p) {
  if (!has_root(c) && p > kAllRootsUpTo && !on_stride(p, plan.quadratic_stride)) return {};
  const bool full = p <= plan.full_up_to;
  if (!full && !on_stride(p, plan.stride)) return {};
  if (!has_root(c)) return {0};
  if (full) return roots_for(p);
  if (plan.stride_last_root && p > 1) return {0, p - 1};
  return {0};
}

struct SweepCase {
  const SweepPlatform* platform;
  int ranks;
  BuildParams params;
  std::string describe(const AlgorithmInfo& a) const {
    std::string text = fmt::format("{}/{} on {} p={} root={} size={} segment={} element={}",
                                   to_string(a.collective), a.name, platform->name, ranks,
                                   params.root, params.size, params.segment, params.element_size);
    if (is_uneven(a.collective)) {
      text += fmt::format(" counts={}", to_string(counts_pattern(ranks, params.root, params.size)));
    }
    return text;
  }
};

// Calls `visit` for every case of the sweep of one algorithm.
void for_each_case(const AlgorithmInfo& a, const std::function<void(const SweepCase&)>& visit) {
  const auto& platforms = sweep_platforms();
  for (std::size_t i = 0; i < platforms.size(); ++i) {
    const SweepPlatform& sp = platforms[i];
    for (int p = 1; p <= kMaxRanks; ++p) {
      if (!in_sweep(p)) continue;
      if (!on_every_platform(p) && p % platforms.size() != i) continue;
      for (const SizePlan& plan : size_plans()) {
        // Non-pipelined algorithms ignore the segment: the plans with the default are enough.
        // A `hier-shm:X` with a pipelined X gets X's segments up to kAllRootsUpTo only: X's own
        // sweep covers them for every p, and above that the two levels compose the same way.
        const bool segmented = a.pipelined && (a.leaders_algorithm.empty() || p <= kAllRootsUpTo);
        if (!segmented && std::find(plan.segments.begin(), plan.segments.end(), kDefaultSegment) ==
                              plan.segments.end()) {
          continue;
        }
        const auto segments = segmented ? plan.segments : std::vector{kDefaultSegment};
        for (const int root : plan_roots(plan, a.collective, p)) {
          for (const std::uint64_t segment : segments) {
            visit({&sp, p, case_params(a.collective, p, root, plan.size, segment)});
          }
        }
      }
    }
  }
}

// ---- the test ----

// The parameter is "collective/algorithm", so CTest's test names and gtest's output read well.
class VerifySweep : public ::testing::TestWithParam<std::string> {
 protected:
  static const AlgorithmInfo& algorithm(const std::string& param) {
    const auto slash = param.find('/');
    const auto* info =
        find_algorithm(*parse_collective(param.substr(0, slash)), param.substr(slash + 1));
    return *info;
  }
};

TEST_P(VerifySweep, EveryCaseVerifies) {
  const AlgorithmInfo& a = algorithm(GetParam());
  Platform platform;
  const SweepPlatform* placed_for = nullptr;
  int placed_ranks = 0;
  int cases = 0;
  int failures = 0;
  for_each_case(a, [&](const SweepCase& c) {
    if (placed_for != c.platform || placed_ranks != c.ranks) {
      platform = c.platform->platform;
      place(platform, c.ranks, c.platform->round_robin);
      placed_for = c.platform;
      placed_ranks = c.ranks;
    }
    ++cases;
    std::string error;
    try {
      const Schedule s = build_schedule(platform, a.collective, a.name, c.params);
      const VerifyReport report = verify_schedule(s, platform, {.max_errors = 1});
      if (!report.ok()) error = report.errors.front();
    } catch (const std::exception& e) {
      error = fmt::format("the builder threw: {}", e.what());
    }
    if (!error.empty() && ++failures <= kMaxReportedFailures) {
      ADD_FAILURE() << c.describe(a) << ": " << error;
    }
  });
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  RecordProperty("cases", cases);
}

std::vector<std::string> every_algorithm() {
  std::vector<std::string> v;
  for (const auto& list : {all_algorithms(), leaders_variants()}) {
    for (const AlgorithmInfo& a : list) {
      v.push_back(fmt::format("{}/{}", to_string(a.collective), a.name));
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, VerifySweep, ::testing::ValuesIn(every_algorithm()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '/' || c == '-' || c == ':') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace multilane
