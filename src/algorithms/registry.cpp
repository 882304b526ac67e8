// registry.cpp — the table of every algorithm, and parameter checking before a build.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "builders.hpp"
#include "multilane/collective.hpp"
#include "multilane/errors.hpp"
#include "site_parts.hpp"

namespace multilane {

namespace {

constexpr auto B = Collective::Bcast;
constexpr auto S = Collective::Scatter;
constexpr auto G = Collective::Gather;
constexpr auto AG = Collective::Allgather;
constexpr auto AA = Collective::Alltoall;
constexpr auto R = Collective::Reduce;
constexpr auto AR = Collective::Allreduce;
constexpr auto RS = Collective::ReduceScatter;
constexpr auto SC = Collective::Scan;
constexpr auto EX = Collective::Exscan;

constexpr std::array kAlgorithms = {
    AlgorithmInfo{.collective = B,
                  .name = "linear",
                  .summary = "root sends the whole message to every rank at once",
                  .origin = "Open MPI basic linear",
                  .build = algo::bcast_linear},
    AlgorithmInfo{.collective = B,
                  .name = "chain",
                  .summary = "pipelined chain through every rank, sites one after another",
                  .origin = "broadcast paper, sec. 2.2",
                  .pipelined = true,
                  .build = algo::bcast_chain},
    AlgorithmInfo{.collective = B,
                  .name = "binary",
                  .summary = "pipelined binary tree, one lane per child; on several sites the root "
                             "first feeds one representative per site",
                  .origin = "broadcast paper, sec. 2.2 and 6",
                  .pipelined = true,
                  .build = algo::bcast_binary},
    AlgorithmInfo{.collective = B,
                  .name = "binomial",
                  .summary = "binomial tree, whole message, largest subtree first",
                  .origin = "MPICH",
                  .build = algo::bcast_binomial},
    AlgorithmInfo{
        .collective = B,
        .name = "vandegeijn",
        .summary = "binomial scatter of p chunks, then recursive-doubling allgather (any p)",
        .origin = "van de Geijn et al., SC'94; MPICH",
        .build = algo::bcast_vandegeijn},
    AlgorithmInfo{.collective = B,
                  .name = "multilane",
                  .summary = "two pipelined binary trees carrying one half each, leaves feeding "
                             "the other tree (any p)",
                  .origin = "broadcast paper, sec. 3.1",
                  .pipelined = true,
                  .build = algo::bcast_multilane},
    AlgorithmInfo{
        .collective = B,
        .name = "multilane-sites",
        .summary = "multilane trees in every site, sites chained through the leaves' spare uplinks",
        .origin = "broadcast paper, sec. 3.2",
        .pipelined = true,
        .build = algo::bcast_multilane_sites},
    AlgorithmInfo{
        .collective = B,
        .name = "dbtree",
        .summary = "double binary tree: two pipelined trees, every rank inner in at most one",
        .origin = "NCCL",
        .pipelined = true,
        .build = algo::bcast_dbtree},
    AlgorithmInfo{
        .collective = B,
        .name = "site-binomial",
        .summary = "root to one representative per site over the WAN, binomial inside each site",
        .origin = "MagPIe",
        .build = algo::bcast_site_binomial},
    AlgorithmInfo{.collective = B,
                  .name = "hier-shm",
                  .summary = "binomial tree among node leaders (hier-shm:X: bcast X), then shared "
                             "memory within each node",
                  .origin = "SMP collectives paper, sec. 8.1",
                  .build = algo::bcast_hier_shm,
                  .two_level = true,
                  .takes_leaders_algorithm = true},
    AlgorithmInfo{
        .collective = B,
        .name = "hier-shm-vdg",
        .summary = "van de Geijn among node leaders only, then shared memory within each node",
        .origin = "SMP collectives paper, sec. 8.4",
        .build = algo::bcast_hier_shm_vdg,
        .two_level = true},
    AlgorithmInfo{.collective = S,
                  .name = "linear",
                  .summary = "root sends every rank its block at once",
                  .origin = "Open MPI basic linear",
                  .build = algo::scatter_linear,
                  .uneven = true,
                  .own_counts_only = true},
    AlgorithmInfo{.collective = S,
                  .name = "binomial",
                  .summary = "binomial tree; inner ranks relay their subtree's blocks",
                  .origin = "MPICH",
                  .build = algo::scatter_binomial,
                  .uneven = true},
    AlgorithmInfo{.collective = S,
                  .name = "single-lane",
                  .summary = "one WAN message per site to a representative, which scatters locally",
                  .origin = "MagPIe; scatter/gather paper, sec. 3.2",
                  .build = algo::scatter_single_lane,
                  .uneven = true},
    AlgorithmInfo{.collective = S,
                  .name = "multilane",
                  .summary = "P node pairs cross the WAN at once (P given or from the cost model)",
                  .origin = "scatter/gather paper, sec. 4",
                  .wan_pairs = algo::scatter_multilane_wan_pairs,
                  .build = algo::scatter_multilane,
                  .uneven = true},
    AlgorithmInfo{.collective = S,
                  .name = "hier-shm",
                  .summary = "root sends each node leader its node's blocks (hier-shm:X: scatter X "
                             "if nodes have equal rank counts), shared memory within nodes",
                  .origin = "SMP collectives paper, sec. 8.2",
                  .build = algo::scatter_hier_shm,
                  .two_level = true,
                  .takes_leaders_algorithm = true},
    AlgorithmInfo{.collective = G,
                  .name = "linear",
                  .summary = "every rank sends its block to the root at once",
                  .origin = "Open MPI basic linear",
                  .build = algo::gather_linear,
                  .uneven = true,
                  .own_counts_only = true},
    AlgorithmInfo{.collective = G,
                  .name = "binomial",
                  .summary = "binomial tree; inner ranks gather their subtree's blocks",
                  .origin = "MPICH",
                  .build = algo::gather_binomial,
                  .uneven = true},
    AlgorithmInfo{.collective = G,
                  .name = "single-lane",
                  .summary = "representatives gather their site, one WAN message per site",
                  .origin = "MagPIe; scatter/gather paper, sec. 3.2",
                  .build = algo::gather_single_lane,
                  .uneven = true},
    AlgorithmInfo{.collective = G,
                  .name = "multilane",
                  .summary = "P node pairs cross the WAN at once (the multilane scatter reversed)",
                  .origin = "scatter/gather paper, sec. 4",
                  .wan_pairs = algo::scatter_multilane_wan_pairs,
                  .build = algo::gather_multilane,
                  .uneven = true},
    AlgorithmInfo{.collective = G,
                  .name = "hier-shm",
                  .summary = "shared memory within nodes, node leaders send their node's blocks to "
                             "the root (hier-shm:X: gather X if nodes have equal rank counts)",
                  .origin = "SMP collectives paper, sec. 8.2",
                  .build = algo::gather_hier_shm,
                  .two_level = true,
                  .takes_leaders_algorithm = true},
    AlgorithmInfo{.collective = AG,
                  .name = "ring",
                  .summary = "p-1 steps around a ring",
                  .origin = "MPICH, Open MPI",
                  .build = algo::allgather_ring,
                  .uneven = true},
    AlgorithmInfo{.collective = AG,
                  .name = "recursive-doubling",
                  .summary = "log p exchange steps with doubling blocks (any p)",
                  .origin = "MPICH",
                  .build = algo::allgather_recursive_doubling,
                  .uneven = true},
    AlgorithmInfo{.collective = AG,
                  .name = "multilane-sites",
                  .summary = "ring in every site, then k lanes exchange each pair of sites' "
                             "blocks across the WAN once, lane leaders hand them out",
                  .origin = "Traff-Hunold lanes; scatter/gather paper's pairs",
                  .wan_pairs = algo::site_lanes_wan_pairs,
                  .build = algo::allgather_multilane_sites,
                  .uneven = true},
    AlgorithmInfo{.collective = AG,
                  .name = "hier-shm",
                  .summary =
                      "group gather to node leaders, leaders exchange (hier-shm:X: allgather X if "
                      "nodes have equal rank counts), group bcast within nodes",
                  .origin = "SMP collectives paper (two levels)",
                  .build = algo::allgather_hier_shm,
                  .two_level = true,
                  .takes_leaders_algorithm = true},
    AlgorithmInfo{.collective = AA,
                  .name = "pairwise",
                  .summary = "p-1 steps; in step k send to r+k and receive from r-k",
                  .origin = "MPICH, Open MPI",
                  .build = algo::alltoall_pairwise,
                  .uneven = true,
                  .own_counts_only = true},
    AlgorithmInfo{.collective = AA,
                  .name = "linear",
                  .summary = "all sends and receives posted at once",
                  .origin = "Open MPI basic linear",
                  .build = algo::alltoall_linear,
                  .uneven = true,
                  .own_counts_only = true},
    AlgorithmInfo{.collective = AA,
                  .name = "multilane-sites",
                  .summary = "directly within a site; k lane leaders gather the site's blocks "
                             "for each other site, cross the WAN once per pair of sites in one "
                             "message per lane, and hand them out",
                  .origin = "scatter/gather paper's pairs; Traff-Hunold lanes",
                  .wan_pairs = algo::site_lanes_wan_pairs,
                  .build = algo::alltoall_multilane_sites,
                  .uneven = true},
    AlgorithmInfo{.collective = AA,
                  .name = "hier-shm",
                  .summary = "shared-memory alltoall within nodes, pair-wise between nodes",
                  .origin = "SMP collectives paper, sec. 8.3",
                  .build = algo::alltoall_hier_shm,
                  .two_level = true},
    AlgorithmInfo{.collective = R,
                  .name = "binomial",
                  .summary = "binomial tree, whole vector, smallest subtree combined first",
                  .origin = "MPICH",
                  .build = algo::reduce_binomial},
    AlgorithmInfo{.collective = R,
                  .name = "binary",
                  .summary = "pipelined binary tree (the binary broadcast's tree reversed)",
                  .origin = "broadcast paper, sec. 2.2, reversed",
                  .pipelined = true,
                  .build = algo::reduce_binary},
    AlgorithmInfo{.collective = R,
                  .name = "chain",
                  .summary = "pipelined chain through every rank, sites one after another",
                  .origin = "broadcast paper, sec. 2.2, reversed",
                  .pipelined = true,
                  .build = algo::reduce_chain},
    AlgorithmInfo{
        .collective = R,
        .name = "two-tree",
        .summary =
            "two pipelined binary trees reducing one half each, every rank inner in at most one",
        .origin = "Sanders, Speck, Traff 2009; NCCL double binary tree",
        .pipelined = true,
        .build = algo::reduce_two_tree},
    AlgorithmInfo{
        .collective = R,
        .name = "multilane",
        .summary =
            "the multilane broadcast's two lane-coloured trees reversed, one half each, pipelined",
        .origin = "broadcast paper, sec. 3.1, reversed",
        .pipelined = true,
        .build = algo::reduce_multilane},
    AlgorithmInfo{.collective = R,
                  .name = "rabenseifner",
                  .summary = "recursive-halving reduce-scatter, then binomial gather to the root",
                  .origin = "Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005",
                  .build = algo::reduce_rabenseifner},
    AlgorithmInfo{.collective = R,
                  .name = "multilane-sites",
                  .summary = "reduce-scatter in every site, k lanes combine across the WAN into "
                             "the root's site, then to the root",
                  .origin = "scatter/gather paper's pairs; Traff-Hunold lanes",
                  .wan_pairs = algo::multilane_sites_wan_pairs,
                  .build = algo::reduce_multilane_sites},
    AlgorithmInfo{
        .collective = R,
        .name = "hier-shm",
        .summary = "every rank of a node combines one slice through shared memory; slice j crosses "
                   "the nodes on rail j (local rank j); group bcasts on the root's node",
        .origin = "SMP collectives paper's framework; Traff-Hunold lanes",
        .build = algo::reduce_hier_shm,
        .two_level = true},
    AlgorithmInfo{.collective = AR,
                  .name = "recursive-doubling",
                  .summary = "log p exchanges of the whole vector (any p)",
                  .origin = "MPICH; Thakur, Rabenseifner, Gropp 2005",
                  .build = algo::allreduce_recursive_doubling},
    AlgorithmInfo{.collective = AR,
                  .name = "ring",
                  .summary = "ring reduce-scatter, then ring allgather",
                  .origin = "Patarasuk and Yuan 2009; NCCL, Open MPI",
                  .build = algo::allreduce_ring},
    AlgorithmInfo{.collective = AR,
                  .name = "rabenseifner",
                  .summary = "recursive-halving reduce-scatter, then recursive-doubling allgather",
                  .origin = "Rabenseifner 2004; MPICH",
                  .build = algo::allreduce_rabenseifner},
    AlgorithmInfo{
        .collective = AR,
        .name = "two-tree",
        .summary = "reduce up and broadcast down two pipelined binary trees, one half each",
        .origin = "Sanders, Speck, Traff 2009; NCCL double binary tree",
        .pipelined = true,
        .build = algo::allreduce_two_tree},
    AlgorithmInfo{.collective = AR,
                  .name = "multilane",
                  .summary = "reduce up and broadcast down the multilane trees, pipelined",
                  .origin = "broadcast paper, sec. 3.1",
                  .pipelined = true,
                  .build = algo::allreduce_multilane},
    AlgorithmInfo{.collective = AR,
                  .name = "multilane-sites",
                  .summary = "reduce-scatter in every site, k lanes allreduce across the WAN on "
                             "1/k each, allgather in every site; pipelined in rounds",
                  .origin = "Traff-Hunold lanes; UCC split_rail; scatter/gather paper's pairs",
                  .pipelined = true,
                  .wan_pairs = algo::multilane_sites_wan_pairs,
                  .build = algo::allreduce_multilane_sites},
    AlgorithmInfo{.collective = AR,
                  .name = "hier-shm",
                  .summary = "every rank of a node combines one slice through shared memory; rails "
                             "(local rank j of every node) allreduce slice j; group bcasts",
                  .origin = "SMP collectives paper's framework; Traff-Hunold lanes",
                  .build = algo::allreduce_hier_shm,
                  .two_level = true},
    AlgorithmInfo{.collective = RS,
                  .name = "ring",
                  .summary = "p-1 steps around a ring, two blocks of room",
                  .origin = "MPICH, Open MPI",
                  .build = algo::reduce_scatter_ring,
                  .uneven = true},
    AlgorithmInfo{.collective = RS,
                  .name = "recursive-halving",
                  .summary = "log p halving steps over the whole vector, then blocks to owners",
                  .origin = "MPICH; Thakur, Rabenseifner, Gropp 2005",
                  .build = algo::reduce_scatter_recursive_halving,
                  .uneven = true},
    AlgorithmInfo{.collective = RS,
                  .name = "pairwise",
                  .summary = "p-1 steps; in step k send block r+k to r+k, combine from r-k",
                  .origin = "MPICH",
                  .build = algo::reduce_scatter_pairwise,
                  .uneven = true},
    AlgorithmInfo{.collective = RS,
                  .name = "multilane-sites",
                  .summary = "reduce-scatter in every site, k lanes exchange across the WAN, "
                             "blocks to owners in every site",
                  .origin = "Traff-Hunold lanes; scatter/gather paper's pairs",
                  .wan_pairs = algo::multilane_sites_wan_pairs,
                  .build = algo::reduce_scatter_multilane_sites,
                  .uneven = true},
    AlgorithmInfo{.collective = SC,
                  .name = "chain",
                  .summary = "pipelined chain in rank order: each rank puts its predecessor's "
                             "prefix in front of its input and passes the new prefix on",
                  .origin = "Open MPI linear scan, pipelined",
                  .pipelined = true,
                  .build = algo::scan_chain},
    AlgorithmInfo{.collective = SC,
                  .name = "recursive-doubling",
                  .summary = "step k: each rank sends its partial to rank+2^k and puts the one "
                             "from rank-2^k in front of its own",
                  .origin = "Hillis and Steele, CACM 1986; MPICH",
                  .build = algo::scan_recursive_doubling},
    AlgorithmInfo{.collective = SC,
                  .name = "multilane-sites",
                  .summary = "recursive doubling within each site's run of consecutive ranks, each "
                             "run's total across the WAN once to every later run, k lanes",
                  .origin = "MagPIe's one WAN crossing; scatter/gather paper's pairs",
                  .wan_pairs = algo::scan_multilane_sites_wan_pairs,
                  .build = algo::scan_multilane_sites},
    AlgorithmInfo{.collective = EX,
                  .name = "chain",
                  .summary = "pipelined chain in rank order: each rank puts its predecessor's "
                             "prefix in front of its input and passes the new prefix on",
                  .origin = "Open MPI linear scan, pipelined",
                  .pipelined = true,
                  .build = algo::exscan_chain},
    AlgorithmInfo{.collective = EX,
                  .name = "recursive-doubling",
                  .summary = "step k: each rank sends its partial to rank+2^k and puts the one "
                             "from rank-2^k in front of its own (inputs first shifted one rank up)",
                  .origin = "Hillis and Steele, CACM 1986; MPICH",
                  .build = algo::exscan_recursive_doubling},
    AlgorithmInfo{.collective = EX,
                  .name = "multilane-sites",
                  .summary = "recursive doubling within each site's run of consecutive ranks, each "
                             "run's total across the WAN once to every later run, k lanes",
                  .origin = "MagPIe's one WAN crossing; scatter/gather paper's pairs",
                  .wan_pairs = algo::scan_multilane_sites_wan_pairs,
                  .build = algo::exscan_multilane_sites},
};

// Every `base:X` entry: base takes a leaders' algorithm, X is a one-level algorithm of the same
// collective. Built once; the names live in `names`, which never changes after.
struct LeadersVariants {
  std::vector<std::string> names;
  std::vector<AlgorithmInfo> infos;
};

const LeadersVariants& leaders_variant_table() {
  static const LeadersVariants table = [] {
    std::vector<std::pair<const AlgorithmInfo*, const AlgorithmInfo*>> pairs;
    for (const AlgorithmInfo& base : kAlgorithms) {
      if (!base.takes_leaders_algorithm) continue;
      for (const AlgorithmInfo& leaders : kAlgorithms) {
        if (leaders.collective == base.collective && !leaders.two_level) {
          pairs.emplace_back(&base, &leaders);
        }
      }
    }
    LeadersVariants t;
    t.names.reserve(pairs.size());  // the views below point into these strings
    for (const auto& [base, leaders] : pairs) {
      t.names.push_back(fmt::format("{}:{}", base->name, leaders->name));
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto& [base, leaders] = pairs[i];
      AlgorithmInfo info = *base;
      info.name = t.names[i];
      info.pipelined = leaders->pipelined;
      // Only scatter and gather have leaders' algorithms that take pairs, and gather is the
      // reversed scatter: the pairs are those of the leaders' scatter.
      info.wan_pairs = leaders->uses_wan_pairs() ? algo::hier_shm_scatter_wan_pairs : nullptr;
      info.takes_leaders_algorithm = false;
      info.leaders_algorithm = leaders->name;
      t.infos.push_back(info);
    }
    return t;
  }();
  return table;
}

// kAlgorithms, then the v-forms: an entry of every algorithm that takes per-rank counts.
const std::vector<AlgorithmInfo>& algorithm_table() {
  static const std::vector<AlgorithmInfo> table = [] {
    std::vector<AlgorithmInfo> all(kAlgorithms.begin(), kAlgorithms.end());
    for (const Collective uneven : kAllCollectives) {
      if (!is_uneven(uneven)) continue;
      for (const AlgorithmInfo& even : kAlgorithms) {
        if (even.collective != even_form(uneven) || !even.uneven) continue;
        AlgorithmInfo info = even;
        info.collective = uneven;
        all.push_back(info);
      }
    }
    return all;
  }();
  return table;
}

const AlgorithmInfo* find_plain(Collective collective, std::string_view name) {
  for (const auto& a : algorithm_table()) {
    if (a.collective == collective && a.name == name) return &a;
  }
  return nullptr;
}

std::string names_where(Collective collective, bool (*keep)(const AlgorithmInfo&)) {
  std::string names;
  for (const auto& a : algorithm_table()) {
    if (a.collective != collective || !keep(a)) continue;
    if (!names.empty()) names += ", ";
    names += a.name;
  }
  return names;
}

}  // namespace

std::span<const AlgorithmInfo> all_algorithms() {
  return algorithm_table();
}

std::span<const AlgorithmInfo> leaders_variants() {
  return leaders_variant_table().infos;
}

const AlgorithmInfo* find_algorithm(Collective collective, std::string_view name) {
  if (const AlgorithmInfo* plain = find_plain(collective, name)) return plain;
  if (name.find(':') == std::string_view::npos) return nullptr;
  for (const auto& a : leaders_variants()) {
    if (a.collective == collective && a.name == name) return &a;
  }
  return nullptr;
}

std::string algorithm_names(Collective collective) {
  return names_where(collective, [](const AlgorithmInfo&) { return true; });
}

std::string leaders_algorithm_names(Collective collective) {
  return names_where(collective, [](const AlgorithmInfo& a) { return !a.two_level; });
}

std::string leaders_algorithm_error(Collective collective, std::string_view name) {
  const auto colon = name.find(':');
  if (colon == std::string_view::npos || find_algorithm(collective, name)) return "";
  const AlgorithmInfo* base = find_plain(collective, name.substr(0, colon));
  if (!base) return "";
  if (!base->takes_leaders_algorithm) {
    const std::string takers =
        names_where(collective, [](const AlgorithmInfo& a) { return a.takes_leaders_algorithm; });
    return fmt::format("{} takes no leaders' algorithm ({})", base->name,
                       takers.empty() ? fmt::format("no {} algorithm does", to_string(collective))
                                      : fmt::format("only {} does", takers));
  }
  const std::string_view leaders = name.substr(colon + 1);
  const AlgorithmInfo* sub = find_plain(collective, leaders);
  return fmt::format("{}the leaders' algorithm of {} must be one of {}",
                     sub && sub->two_level ? fmt::format("{} is two-level itself; ", leaders) : "",
                     base->name, leaders_algorithm_names(collective));
}

namespace {

// "choose one of <names>", or "choose all, auto or one of <names>" with `also` = {all, auto}.
std::string choose_phrase(std::initializer_list<std::string_view> also, std::string_view names) {
  return fmt::format("choose {}{}one of {}", fmt::join(also, ", "), also.size() ? " or " : "",
                     names);
}

}  // namespace

std::string unknown_algorithm_message(Collective collective, std::string_view name,
                                      std::initializer_list<std::string_view> also) {
  const std::string why = leaders_algorithm_error(collective, name);
  return fmt::format("unknown {} algorithm \"{}\": {}", to_string(collective), name,
                     why.empty() ? choose_phrase(also, algorithm_names(collective)) : why);
}

std::string unknown_algorithm_message(std::span<const Collective> collectives,
                                      std::string_view name,
                                      std::initializer_list<std::string_view> also) {
  if (collectives.size() == 1) return unknown_algorithm_message(collectives[0], name, also);
  std::vector<std::string> each;
  for (const Collective c : collectives) {
    each.push_back(fmt::format("{}: {}", to_string(c), algorithm_names(c)));
  }
  return fmt::format("unknown algorithm \"{}\" for {} collectives: {}", name, collectives.size(),
                     choose_phrase(also, fmt::format("{}", fmt::join(each, "; "))));
}

int wan_pairs_used(const Platform& platform, Collective collective, std::string_view algorithm,
                   const BuildParams& params) {
  const AlgorithmInfo* info = find_algorithm(collective, algorithm);
  if (!info) throw UsageError(unknown_algorithm_message(collective, algorithm));
  if (!info->uses_wan_pairs()) return 0;
  BuildParams named = params;
  named.leaders_algorithm = info->leaders_algorithm;
  return info->wan_pairs(platform, named);
}

Schedule build_schedule(const Platform& platform, Collective collective, std::string_view algorithm,
                        const BuildParams& params) {
  const AlgorithmInfo* info = find_algorithm(collective, algorithm);
  if (!info) throw UsageError(unknown_algorithm_message(collective, algorithm));
  const int p = platform.num_ranks();
  if (p < 1) throw UsageError("the platform places no rank: at least one is needed");
  if (params.root < 0 || params.root >= p) {
    throw UsageError(fmt::format("root {} is out of range: the platform has {} ranks (0..{})",
                                 params.root, p, p - 1));
  }
  if (info->pipelined && params.segment == 0) {
    throw UsageError("segment size must be at least 1 byte");
  }
  if (params.element_size == 0) {
    throw UsageError("element size must be at least 1 byte");
  }
  if (is_reduction(collective) && params.size % params.element_size != 0) {
    throw UsageError(fmt::format("size {} is not a whole number of {}-byte elements", params.size,
                                 params.element_size));
  }
  if (params.wan_pairs < 0) {
    throw UsageError(fmt::format("wan pairs {} is out of range: give 1 or more, or 0 for auto",
                                 params.wan_pairs));
  }
  if (const auto error = counts_error(collective, p, params.counts)) throw UsageError(*error);
  if (is_reduction(collective)) {
    for (std::size_t i = 0; i < params.counts.size(); ++i) {
      if (params.counts[i] % params.element_size == 0) continue;
      throw UsageError(fmt::format("count {} ({} bytes) is not a whole number of {}-byte elements",
                                   i, params.counts[i], params.element_size));
    }
  }
  if (is_uneven(collective) && params.size != largest_count(params.counts)) {
    throw UsageError(fmt::format("size {} of a {} is not its largest count, {}", params.size,
                                 to_string(collective), largest_count(params.counts)));
  }
  BuildParams named = params;
  named.leaders_algorithm = info->leaders_algorithm;
  Schedule schedule = info->build(platform, named);
  schedule.collective = collective;  // a v-form's builder is its even collective's
  schedule.counts = params.counts;
  return schedule;
}

}  // namespace multilane
