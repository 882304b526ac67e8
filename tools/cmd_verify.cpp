// `multilane verify` — build schedules and check them symbolically (see verify.hpp).
//
//   multilane verify [--platform FILE] [--ranks N] [--collective C|all] [--algorithm A|all]
//                    [--sizes LIST] [--roots LIST|all] [--segments LIST] [--counts LIST]
//                    [--verbose]
//   multilane verify --random N [--seed S] [--collective C|all] [--algorithm A|all]
//
// The v-forms (gatherv, scatterv, allgatherv, alltoallv) run every size with each pattern of
// uneven counts of --counts (count_patterns.hpp), the size being the largest block; random
// cases draw counts of their own (a quarter of them empty).
// Reductions take their element size from --type (default int8, so that odd sizes stay odd); a
// size that is not a whole number of elements is an error. Random cases of reductions draw an
// element size of 1, 2, 4, 8 or 16 bytes.
//
// The sweep builds every selected (collective, algorithm) for every size, root and segment on
// one platform (default: a generated two-site platform, 16 nodes of 2 lanes per site). Random
// mode draws N cases, each on its own random platform, deterministically from the seed.
// One line per failing schedule, then `N verified, F failed`; exit status 1 when F > 0, 2 on
// a bad argument.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "command.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/count_patterns.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "multilane/verify.hpp"
#include "reduction_options.hpp"
#include "support/ceil_div.hpp"

namespace multilane::cli {

namespace {

constexpr const char* kDefaultSizes = "0,1,7,1000,1048577";
// Default segments: the builders' own, plus an odd small one while it keeps the op count low.
constexpr std::uint64_t kOddSegment = 7;
constexpr std::uint64_t kOddSegmentUpTo = 64 * 1024;

struct VerifyArgs {
  std::string platform_file;
  int ranks = 0;  // 0: as placed by the platform
  std::string collective = "all";
  std::string algorithm = "all";
  std::string sizes = kDefaultSizes;
  std::string roots = "0";
  std::string segments;  // empty: per size, see default_segments()
  std::string counts = "ramp,zeros,one-huge";
  int random = 0;
  std::uint64_t seed = 1;
  bool verbose = false;
  ReductionOptions reduction{"int8"};
};

struct Case {
  const AlgorithmInfo* algorithm;
  BuildParams params;
  std::string counts;  // the v-forms: the counts' pattern, or "random"
};

struct Tally {
  std::uint64_t verified = 0;
  std::uint64_t failed = 0;
};

std::string case_name(const Case& c, int num_ranks) {
  std::string name = fmt::format("{}/{} p={} root={} size={}", to_string(c.algorithm->collective),
                                 c.algorithm->name, num_ranks, c.params.root, c.params.size);
  if (c.algorithm->pipelined) name += fmt::format(" segment={}", c.params.segment);
  if (c.algorithm->uses_wan_pairs()) name += fmt::format(" wan-pairs={}", c.params.wan_pairs);
  if (!c.counts.empty()) name += fmt::format(" counts={}", c.counts);
  if (is_reduction(c.algorithm->collective)) {
    name += fmt::format(" element={}", c.params.element_size);
  }
  return name;
}

// Builds and verifies one case; prints a line when it fails (or always, when verbose).
void run_case(const Platform& platform, const Case& c, const std::string& context, bool verbose,
              Tally& tally) {
  const std::string name = case_name(c, platform.num_ranks()) + context;
  std::string failure;
  try {
    const Schedule schedule =
        build_schedule(platform, c.algorithm->collective, c.algorithm->name, c.params);
    const VerifyReport report = verify_schedule(schedule, platform, {.max_errors = 1});
    if (!report.ok()) {
      failure = report.errors.front();
    } else if (verbose) {
      fmt::print("ok   {}: {} ops, {} transfers\n", name, report.ops, report.transfers);
    }
  } catch (const std::exception& e) {
    failure = fmt::format("the builder threw: {}", e.what());
  }
  ++tally.verified;
  if (!failure.empty()) {
    ++tally.failed;
    fmt::print("FAIL {}: {}\n", name, failure);
  }
}

// ---- the sweep ------------------------------------------------------------------------------

Platform sweep_platform(const VerifyArgs& args) {
  Platform platform = args.platform_file.empty() ? generate_platform(GenerateOptions{})
                                                 : load_platform_file(args.platform_file);
  if (args.ranks != 0) {
    if (args.ranks < 1 || args.ranks > platform.total_cores()) {
      throw UsageError(fmt::format("--ranks {} is out of range: platform {} has {} cores (1..{})",
                                   args.ranks, platform.name, platform.total_cores(),
                                   platform.total_cores()));
    }
    platform.place_block(args.ranks);
  }
  if (platform.num_ranks() < 1) {
    throw UsageError(fmt::format("platform {} places no rank: give --ranks", platform.name));
  }
  return platform;
}

std::vector<Collective> selected_collectives(const std::string& name) {
  if (name == "all") return {std::begin(kAllCollectives), std::end(kAllCollectives)};
  if (const auto c = parse_collective(name)) return {*c};
  throw UsageError(fmt::format("--collective: unknown collective \"{}\": choose all, {}", name,
                               collective_names()));
}

std::vector<const AlgorithmInfo*> selected_algorithms(const VerifyArgs& args) {
  std::vector<const AlgorithmInfo*> out;
  const std::vector<Collective> collectives = selected_collectives(args.collective);
  for (const Collective c : collectives) {
    if (args.algorithm != "all") {
      // find_algorithm() also knows the two-level `hier-shm:X` names.
      if (const AlgorithmInfo* a = find_algorithm(c, args.algorithm)) out.push_back(a);
    } else {
      for (const AlgorithmInfo& a : all_algorithms()) {
        if (a.collective == c) out.push_back(&a);
      }
    }
  }
  if (out.empty()) {
    throw UsageError("--algorithm: " +
                     unknown_algorithm_message(collectives, args.algorithm, {"all"}));
  }
  return out;
}

std::vector<int> parse_roots(const std::string& text, int num_ranks) {
  std::vector<int> roots;
  if (text == "all") {
    for (int r = 0; r < num_ranks; ++r) roots.push_back(r);
    return roots;
  }
  for (const std::uint64_t root : parse_size_list(text)) {
    if (root >= static_cast<std::uint64_t>(num_ranks)) {
      throw UsageError(
          fmt::format("--roots: root {} is out of range: the platform has {} ranks "
                      "(0..{}), or give all",
                      root, num_ranks, num_ranks - 1));
    }
    roots.push_back(static_cast<int>(root));
  }
  return roots;
}

std::vector<CountsPattern> parse_patterns(const std::string& text) {
  std::vector<CountsPattern> patterns;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto pattern = parse_counts_pattern(name);
    if (!pattern) {
      throw UsageError(
          fmt::format("--counts: unknown pattern \"{}\": choose {}", name, counts_pattern_names()));
    }
    patterns.push_back(*pattern);
    start = comma + 1;
  }
  return patterns;
}

std::vector<std::uint64_t> segments_for(const AlgorithmInfo& a, std::uint64_t size,
                                        const std::vector<std::uint64_t>& explicit_segments) {
  if (!a.pipelined) return {kDefaultSegment};
  if (!explicit_segments.empty()) return explicit_segments;
  if (size > 0 && size <= kOddSegmentUpTo) return {kDefaultSegment, kOddSegment};
  return {kDefaultSegment};
}

int run_sweep(const VerifyArgs& args) {
  const Platform platform = sweep_platform(args);
  const auto algorithms = selected_algorithms(args);
  const auto sizes = parse_option("--sizes", args.sizes, parse_size_list);
  const auto roots = parse_roots(args.roots, platform.num_ranks());
  std::vector<std::uint64_t> segments;
  if (!args.segments.empty()) segments = parse_option("--segments", args.segments, parse_size_list);
  for (const std::uint64_t s : segments) {
    if (s == 0) throw UsageError("--segments: a segment must be at least 1 byte");
  }

  const auto element = static_cast<std::uint32_t>(element_size(args.reduction.parse().type));
  for (const std::uint64_t size : sizes) {
    if (size % element != 0) {
      throw UsageError(
          fmt::format("--sizes: {} bytes is not a whole number of {} elements ({} "
                      "bytes each)",
                      size, args.reduction.type, element));
    }
  }
  const auto patterns = parse_patterns(args.counts);
  Tally tally;
  for (const AlgorithmInfo* a : algorithms) {
    // One pass for an even collective, one per pattern for a v-form.
    const std::size_t passes = is_uneven(a->collective) ? patterns.size() : 1;
    // A collective without a root builds the same schedule for each: one is enough.
    const std::span<const int> case_roots = has_root(a->collective)
                                                ? std::span<const int>(roots)
                                                : std::span<const int>(roots).first(1);
    for (std::size_t pass = 0; pass < passes; ++pass) {
      for (const std::uint64_t size : sizes) {
        for (const int root : case_roots) {
          for (const std::uint64_t segment : segments_for(*a, size, segments)) {
            Case c{a, {.root = root, .size = size, .segment = segment}, ""};
            if (is_reduction(a->collective)) c.params.element_size = element;
            if (is_uneven(a->collective)) {
              c.params.counts = pattern_counts(patterns[pass], a->collective, platform.num_ranks(),
                                               size, c.params.element_size);
              c.counts = to_string(patterns[pass]);
            }
            run_case(platform, c, "", args.verbose, tally);
          }
        }
      }
    }
  }
  fmt::print("{} verified, {} failed\n", tally.verified, tally.failed);
  return tally.failed == 0 ? 0 : 1;
}

// ---- random cases ---------------------------------------------------------------------------

class RandomCases {
 public:
  explicit RandomCases(std::uint64_t seed) : rng_(seed) {}

  // 1-4 sites of 1-12 nodes each; every node has its own lane (1-3) and core (1-3) counts.
  Platform platform() {
    Platform p;
    p.name = "random";
    p.source = "generated";
    const int sites = uniform(1, 4);
    for (int s = 0; s < sites; ++s) {
      p.add_site(fmt::format("s{}", s), 50e-6);
      const int nodes = uniform(1, 12);
      for (int n = 0; n < nodes; ++n) {
        const int cores = uniform(1, 3);
        p.add_node(s, fmt::format("s{}-n{}", s, n), cores, uniform(1, 3), 125e6);
      }
    }
    WanLink wan;
    wan.latency_s = 10e-3;
    wan.aggregate_bps = 1.25e9;
    p.connect_all_sites(wan);
    p.place_block(uniform(1, p.total_cores()));
    return p;
  }

  // One of `algorithms` with a random root, size (0 .. 2 MiB, mostly odd, log-uniform so small
  // sizes are common) and a segment giving 1..64 segments; a v-form's counts are each drawn
  // the same way, a quarter of them empty, and the size is their largest.
  Case draw_case(int num_ranks, std::span<const AlgorithmInfo* const> algorithms) {
    Case c{algorithms[static_cast<std::size_t>(uniform(0, int(algorithms.size()) - 1))], {}, ""};
    c.params.root = uniform(0, num_ranks - 1);
    const int bits = uniform(0, 21);
    c.params.size = bits == 0 ? 0 : (uniform64(std::uint64_t{1} << bits) | 1u);
    const std::uint64_t pieces = static_cast<std::uint64_t>(uniform(1, 64));
    c.params.segment = std::max<std::uint64_t>(1, c.params.size / pieces + uniform64(7));
    c.params.wan_pairs = uniform(0, 4);
    if (is_reduction(c.algorithm->collective)) {
      const std::uint32_t e = 1u << uniform(0, 4);
      c.params.element_size = e;
      c.params.size = round_up<std::uint64_t>(c.params.size, e);
    }
    if (is_uneven(c.algorithm->collective)) {
      const auto p = static_cast<std::size_t>(num_ranks);
      const std::size_t n = c.algorithm->collective == Collective::Alltoallv ? p * p : p;
      for (std::size_t i = 0; i < n; ++i) {
        c.params.counts.push_back(
            round_up<std::uint64_t>(random_count(bits), c.params.element_size));
      }
      c.params.size = largest_count(c.params.counts);
      c.counts = "random";
    }
    return c;
  }

 private:
  // 0 a quarter of the time, else up to 2^bits bytes, log-uniform, mostly odd.
  std::uint64_t random_count(int bits) {
    if (uniform(0, 3) == 0 || bits == 0) return 0;
    return uniform64(std::uint64_t{1} << uniform(0, bits)) | 1u;
  }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::uint64_t uniform64(std::uint64_t below) {
    return std::uniform_int_distribution<std::uint64_t>(0, below - 1)(rng_);
  }
  std::mt19937_64 rng_;
};

std::string describe_shape(const Platform& p) {
  std::string nodes;
  for (const Site& s : p.sites)
    nodes += fmt::format("{}{}", nodes.empty() ? "" : "+", s.nodes.size());
  return fmt::format("{} site{} of {} nodes", p.sites.size(), p.sites.size() == 1 ? "" : "s",
                     nodes);
}

int run_random(const VerifyArgs& args) {
  const auto algorithms = selected_algorithms(args);
  RandomCases random(args.seed);
  Tally tally;
  for (int i = 0; i < args.random; ++i) {
    const Platform platform = random.platform();
    const Case c = random.draw_case(platform.num_ranks(), algorithms);
    run_case(
        platform, c,
        fmt::format(" [random case {} of seed {}, {}]", i, args.seed, describe_shape(platform)),
        args.verbose, tally);
  }
  fmt::print("{} verified, {} failed\n", tally.verified, tally.failed);
  return tally.failed == 0 ? 0 : 1;
}

Runner setup_verify(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  app.add_option("--platform", args->platform_file,
                 "Platform TOML file (default: generated, 2 sites x 16 nodes x 2 lanes)");
  app.add_option("--ranks", args->ranks,
                 "Place this many ranks (default: the platform's placement)");
  app.add_option("--collective", args->collective, collective_names() + ", or all")
      ->capture_default_str();
  args->reduction.add_to(app);
  app.add_option("--algorithm", args->algorithm, "An algorithm of the collective, or all")
      ->capture_default_str();
  app.add_option("--sizes", args->sizes, "Message sizes, comma-separated (64KiB, 1MiB, ...)")
      ->capture_default_str();
  app.add_option("--roots", args->roots,
                 "Roots, comma-separated, or all (a collective without a root runs with the first)")
      ->capture_default_str();
  app.add_option("--segments", args->segments,
                 "Segment sizes of pipelined algorithms (default: 64KiB, and 7 for sizes up to "
                 "64KiB)");
  app.add_option(
         "--counts", args->counts,
         "The v-forms: patterns of uneven counts, comma-separated (" + counts_pattern_names() + ")")
      ->capture_default_str();
  app.add_option("--random", args->random,
                 "Verify N random cases (random platform, root, size, segment and counts) of "
                 "the chosen collectives and algorithms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", args->seed, "Seed of --random")->capture_default_str();
  app.add_flag("--verbose,-v", args->verbose, "Also print every schedule that passes");
  return [args] { return args->random > 0 ? run_random(*args) : run_sweep(*args); };
}

const bool verify_registered = register_command(
    {"verify", "Build schedules and check them symbolically (matching, deadlock, data)",
     setup_verify});

}  // namespace

}  // namespace multilane::cli
