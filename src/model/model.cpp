// model_time() dispatch, the two-level SMP sum, segment choice and the T(P) sweep.
#include "multilane/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "model/forms.hpp"
#include "multilane/errors.hpp"
#include "multilane/wan_pairs.hpp"
#include "support/ceil_div.hpp"

namespace multilane {

namespace model {

void require_one_site(const Figures& f, Collective c, std::string_view algorithm) {
  if (f.sites() > 1) {
    throw UsageError(fmt::format(
        "{} {} has no closed form on several sites (it ignores them, so its WAN traffic depends "
        "on rank numbering); simulate it instead",
        to_string(c), algorithm));
  }
}

namespace {

const FormEntry* find_form(Collective c, std::string_view algorithm) {
  for (auto forms : {bcast_forms(), block_forms(), hier_forms(), reduce_forms()}) {
    for (const auto& e : forms) {
      if (e.collective == c && e.algorithm == algorithm) return &e;
    }
  }
  return nullptr;
}

}  // namespace
}  // namespace model

bool has_closed_form(const Platform& platform, Collective collective, std::string_view algorithm) {
  try {
    BuildParams p;
    p.size = 1024;
    model_time(platform, collective, algorithm, p);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

double model_time(const Platform& platform, Collective collective, std::string_view algorithm,
                  const BuildParams& params, double per_message_overhead_s) {
  const model::FormEntry* e = model::find_form(collective, algorithm);
  BuildParams named = params;
  named.leaders_algorithm = {};  // the name decides, as in build_schedule()
  if (!e) {
    const AlgorithmInfo* info = find_algorithm(collective, algorithm);
    if (!info) throw UsageError(unknown_algorithm_message(collective, algorithm));
    if (!info->leaders_algorithm.empty()) {
      // `base:X`: the base's form, told which X runs between the node leaders.
      e = model::find_form(collective, algorithm.substr(0, algorithm.find(':')));
      named.leaders_algorithm = info->leaders_algorithm;
    }
  }
  if (!e) {
    throw UsageError(fmt::format("{} {} has no closed form; simulate it instead",
                                 to_string(collective), algorithm));
  }
  if (platform.num_ranks() < 1) throw UsageError("the platform places no rank");
  if (params.root < 0 || params.root >= platform.num_ranks()) {
    throw UsageError(fmt::format("root {} is out of range", params.root));
  }
  if (platform.num_ranks() == 1) return 0;
  const model::Figures f = model::figures_of(platform, params.root, per_message_overhead_s);
  if (f.sites() > 1 && !f.wan) {
    throw UsageError("no WAN link joins the root's site to the next site");
  }
  return e->form(f, platform, named);
}

double smp_two_level_time(const Platform& platform, Collective collective,
                          std::string_view inter_node_algorithm, const BuildParams& params) {
  // One rank per node for the inter-node level.
  Platform nodes = platform;
  nodes.ranks.clear();
  int cores = 1;
  for (int n = 0; n < static_cast<int>(platform.nodes.size()); ++n) {
    nodes.ranks.push_back({n, 0});
    cores = std::max(cores, platform.nodes[n].cores);
  }
  BuildParams inter = params;
  inter.root = platform.node_of(params.root);
  const double t_inter = model_time(nodes, collective, inter_node_algorithm, inter);
  const auto& shm = platform.sites[platform.site_of(params.root)].shm;
  const double m = static_cast<double>(params.size);
  double t_intra = 0;
  if (cores > 1) {
    switch (collective) {
      case Collective::Bcast:  // Sender_put, Group_sync, Group_get (concurrent reads)
        t_intra = shm.sync_latency_s + 2 * m / shm.copy_bps;
        break;
      case Collective::Scatter:
      case Collective::Gather:  // the node's cores-1 blocks through the shared segment
        t_intra = shm.sync_latency_s + cores * m / shm.copy_bps;
        break;
      default:
        throw UsageError(fmt::format("no two-level SMP form for {}", to_string(collective)));
    }
  }
  return t_inter + t_intra;
}

std::vector<std::uint64_t> segment_candidates(const Platform& platform, Collective collective,
                                              std::string_view algorithm, const BuildParams& params,
                                              double overhead_s, int max_segments,
                                              std::uint64_t min_segment) {
  const std::uint64_t m = std::max<std::uint64_t>(params.size, 1);
  const std::uint64_t lo = std::min(
      m, std::max(min_segment, ceil_div(m, static_cast<std::uint64_t>(std::max(max_segments, 1)))));
  std::vector<std::uint64_t> all;
  for (std::uint64_t s = std::bit_ceil(lo); s < m; s *= 2) all.push_back(s);
  all.push_back(m);
  auto cost = [&](std::uint64_t s) {
    BuildParams p = params;
    p.segment = s;
    return model_time(platform, collective, algorithm, p, overhead_s);
  };
  std::vector<std::pair<double, std::uint64_t>> scored;
  for (std::uint64_t s : all) scored.emplace_back(cost(s), s);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(scored[i].second);
  return out;
}

std::uint64_t choose_segment(const Platform& platform, Collective collective,
                             std::string_view algorithm, const BuildParams& params,
                             double overhead_s, int max_segments) {
  return segment_candidates(platform, collective, algorithm, params, overhead_s, max_segments)
      .front();
}

std::vector<WanPairsPoint> wan_pairs_sweep(const Platform& platform, int root, std::uint64_t size) {
  const int remote = model::remote_site(platform, root);
  if (remote == platform.site_of(root)) throw UsageError("the P sweep needs two sites");
  const WanPairsInputs in = wan_pairs_inputs(platform, root, remote);
  std::vector<WanPairsPoint> out;
  for (int p = 1; p <= max_wan_pairs(in); ++p) out.push_back({p, wan_pairs_time(in, p, size)});
  return out;
}

}  // namespace multilane
